// How cuda/conv.cpp hands convolutions to cuDNN (cuda/conv_plan.h), checked on the CPU: the 2-d
// form of 1-d and 2-d parameters, cuDNN's output sizes against ember's convolutions, the zero
// rows a gradient gains when a transposed convolution's output_padding reaches its stride
// (checked to give the same values with ember's CPU convolutions), how a huge batch is cut into
// calls, the math modes, the algorithm cache's key, which algorithms may run and the fallback
// when a workspace cannot be had. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ember/cuda/runtime/block_pool.h"
#include "ember/cuda/conv_plan.h"
#include "ember/ember.h"
#include "op_check.h"

using namespace ember;
using namespace ember::cuda;

namespace {

Tensor seeded(IntArrayRef shape, uint64_t seed) {
  ember::manual_seed(seed);
  return rand(shape, kDouble) * 2 - 1;
}

/// t with `add` zero rows (dim 2) and columns (dim 3) appended: what cuda/conv.cpp's
/// padded_gradient builds.
Tensor pad_end(const Tensor& t, std::array<int64_t, 2> add) {
  Tensor p = zeros({t.size(0), t.size(1), t.size(2) + add[0], t.size(3) + add[1]}, kDouble);
  p.narrow(2, 0, t.size(2)).narrow(3, 0, t.size(3)).copy_(t);
  return p;
}

Dims4 d4(const Tensor& t) { return dims_4d(t.sizes()); }

}  // namespace

TEST_CASE("cuda conv plan: 1-d and 2-d parameters in 2-d form") {
  const ConvArgs2d one = conv_args_2d({3}, {2}, {4}, 5);
  CHECK(one.stride == std::array<int64_t, 2>{1, 3});
  CHECK(one.padding == std::array<int64_t, 2>{0, 2});
  CHECK(one.dilation == std::array<int64_t, 2>{1, 4});
  CHECK(one.groups == 5);
  const ConvArgs2d two = conv_args_2d({2, 3}, {1, 0}, {1, 2}, 1);
  CHECK(two.stride == std::array<int64_t, 2>{2, 3});
  CHECK(two.padding == std::array<int64_t, 2>{1, 0});
  CHECK(two.dilation == std::array<int64_t, 2>{1, 2});
  CHECK_THROWS_AS(conv_args_2d({1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1), Error);

  CHECK(dims_4d({2, 3, 7}) == Dims4{2, 3, 1, 7});
  CHECK(dims_4d({2, 3, 5, 7}) == Dims4{2, 3, 5, 7});
  CHECK(packed_strides({2, 3, 5, 7}) == Dims4{105, 35, 7, 1});
  CHECK(numel(Dims4{2, 3, 5, 7}) == 210);
}

TEST_CASE("cuda conv plan: cuDNN's output sizes are ember's") {
  struct Case {
    int64_t h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  };
  const Case cases[] = {{5, 5, 3, 3, 1, 1, 0, 0, 1, 1}, {7, 6, 3, 2, 2, 1, 1, 0, 1, 1}, {9, 7, 2, 3, 3, 2, 2, 1, 2, 3},
                        {28, 28, 3, 3, 1, 1, 1, 1, 1, 1}, {8, 9, 5, 1, 4, 1, 0, 2, 1, 1}, {4, 4, 1, 1, 3, 3, 0, 0, 1, 1}};
  for (const Case& c : cases) {
    INFO("h " << c.h << " w " << c.w << " kernel " << c.kh << "x" << c.kw);
    Tensor x = zeros({2, 4, c.h, c.w}, kDouble), w = zeros({6, 2, c.kh, c.kw}, kDouble);
    Tensor y = conv2d(x, w, {}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, 2);
    const ConvArgs2d a = conv_args_2d({c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, 2);
    CHECK(conv_output_dims(d4(x), d4(w), a) == d4(y));
    // 1-d: the width of the same convolution.
    Tensor x1 = zeros({2, 4, c.w}, kDouble), w1 = zeros({6, 2, c.kw}, kDouble);
    Tensor y1 = conv1d(x1, w1, {}, c.sw, c.pw, c.dw, 2);
    CHECK(conv_output_dims(d4(x1), d4(w1), conv_args_2d({c.sw}, {c.pw}, {c.dw}, 2)) == d4(y1));
  }
  CHECK(conv_output_size(2, 5, 0, 1, 1) == 0);  // the kernel does not fit
}

TEST_CASE("cuda conv plan: gradients of ordinary convolutions need no padding") {
  // The input gradient of a plain convolution is a transposed one whose output_padding is
  // below its stride (adjoint_params), and a weight gradient's g has C(x; w)'s sizes.
  for (int64_t s : {1, 2, 3})
    for (int64_t in : {7, 8, 9, 10}) {
      Tensor x = zeros({1, 2, in, in + 1}, kDouble), w = zeros({3, 2, 3, 2}, kDouble);
      const ConvArgs2d a = conv_args_2d({s, s}, {1, 0}, {2, 1}, 1);
      Tensor y = conv2d(x, w, {}, {s, s}, {1, 0}, {2, 1});
      CHECK(grad_rows_to_add(d4(x), d4(w), d4(y), a) == std::array<int64_t, 2>{0, 0});
    }
  // y larger than C(x; w) is never asked for.
  CHECK_THROWS_AS(grad_rows_to_add({1, 1, 4, 4}, {1, 1, 3, 3}, {1, 1, 3, 2}, ConvArgs2d{}), Error);
}

TEST_CASE("cuda conv plan: a big output_padding becomes zero rows of the input, with the same values") {
  // output_padding >= stride is allowed below the dilation; cuDNN's backward-data call needs the
  // input to have C(out)'s sizes, so the input gains zero rows (Note [Gradients cuDNN accepts]).
  struct Case {
    int64_t h, w, sh, sw, ph, pw, oph, opw, dh, dw;
  };
  const Case cases[] = {{5, 4, 1, 1, 0, 0, 1, 1, 2, 2}, {4, 5, 2, 1, 1, 0, 2, 2, 3, 3},
                        {3, 3, 1, 2, 0, 1, 2, 1, 3, 2}, {6, 2, 1, 1, 2, 0, 0, 1, 1, 2}};
  for (const Case& c : cases) {
    INFO("output_padding " << c.oph << "," << c.opw << " stride " << c.sh << "," << c.sw << " dilation " << c.dh
                             << "," << c.dw);
    Tensor x = seeded({2, 3, c.h, c.w}, 1), w = seeded({3, 2, 3, 3}, 2);
    Tensor out = conv_transpose2d(x, w, {}, {c.sh, c.sw}, {c.ph, c.pw}, {c.oph, c.opw}, 1, {c.dh, c.dw});
    const ConvArgs2d a = conv_args_2d({c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, 1);
    // The plain convolution C maps out-shaped tensors to x-shaped ones.
    const std::array<int64_t, 2> add = grad_rows_to_add(d4(out), d4(w), d4(x), a);
    CHECK(add[0] == (c.oph >= c.sh ? c.oph / c.sh : 0));
    CHECK(add[1] == (c.opw >= c.sw ? c.opw / c.sw : 0));
    Tensor xp = pad_end(x, add);
    CHECK(conv_output_dims(d4(out), d4(w), a) == d4(xp));  // what cuDNN checks
    // The padded input's own output_padding is below the stride, and it gives the same output.
    std::vector<int64_t> op;
    for (int i = 0; i < 2; ++i) {
      const int64_t k = a.dilation[i] * (w.size(2 + i) - 1) + 1;
      op.push_back(out.size(2 + i) - ((xp.size(2 + i) - 1) * a.stride[i] - 2 * a.padding[i] + k));
      CHECK(op.back() >= 0);
      CHECK(op.back() < a.stride[i]);
    }
    Tensor again = conv_transpose2d(xp, w, {}, {c.sh, c.sw}, {c.ph, c.pw}, op, 1, {c.dh, c.dw});
    CHECK(allclose(again, out, 1e-12, 1e-12));

    // The weight gradient of that transposed convolution is Wgrad(g, x); with x zero-padded it is
    // the weight gradient of the plain convolution C(g; w), whose output has xp's sizes.
    Tensor g = seeded(out.sizes(), 3);
    Tensor wt = w.clone().requires_grad_(true);
    conv_transpose2d(x, wt, {}, {c.sh, c.sw}, {c.ph, c.pw}, {c.oph, c.opw}, 1, {c.dh, c.dw}).backward(g);
    Tensor wc = w.clone().requires_grad_(true);
    conv2d(g, wc, {}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}).backward(xp);
    CHECK(allclose(wc.grad(), wt.grad(), 1e-12, 1e-12));
  }
}

TEST_CASE("cuda conv plan: batches too large for 32-bit tensors are cut into calls") {
  CHECK(images_per_call({8, 3, 32, 32}, {8, 16, 30, 30}, {16, 3, 3, 3}) == 8);
  CHECK(images_per_call({0, 3, 32, 32}, {0, 16, 30, 30}, {16, 3, 3, 3}) == 1);  // nothing to run anyway
  // 64 x 256 x 256 = 4 Mi elements per image: 511 images fit below 2^31.
  const Dims4 x{1000, 64, 256, 256}, w{64, 64, 3, 3};
  const int64_t n = images_per_call(x, {1000, 64, 256, 256}, w);
  const int64_t per_image = 64 * 256 * 256;
  CHECK(n == 511);
  CHECK(n * per_image <= kMaxCudnnElements);
  CHECK((n + 1) * per_image > kMaxCudnnElements);
  // The larger of x and y decides (a transposed convolution's output is the larger).
  CHECK(images_per_call({1000, 1, 256, 256}, {1000, 64, 256, 256}, w) == 511);
  // tests/cuda/test_conv.cpp's large batch: 65536 elements per image.
  CHECK(images_per_call({33000, 1, 256, 256}, {33000, 1, 254, 254}, {1, 1, 3, 3}) == 32767);
  // One image beyond the limit cannot be convolved by cuDNN.
  test::check_error([] { images_per_call({1, 1, 65536, 65536}, {1, 1, 65534, 65534}, {1, 1, 3, 3}); },
                    "convolution too large for cuDNN");
}

TEST_CASE("cuda conv plan: math modes") {
  CHECK(search_math(kFloat, true) == ConvMath::kDefault);  // TF32 permitted
  CHECK(search_math(kFloat, false) == ConvMath::kFma);     // TF32 forbidden
  CHECK(search_math(kHalf, false) == ConvMath::kTensorOp);
  CHECK(search_math(kBFloat16, true) == ConvMath::kTensorOp);
  CHECK(search_math(kDouble, true) == ConvMath::kDefault);
  CHECK(run_math(kFloat, false, ConvMath::kTensorOp) == ConvMath::kFma);
  CHECK(run_math(kFloat, true, ConvMath::kTensorOp) == ConvMath::kTensorOp);
  CHECK(run_math(kHalf, false, ConvMath::kTensorOp) == ConvMath::kTensorOp);
  CHECK(run_math(kDouble, false, ConvMath::kDefault) == ConvMath::kDefault);
}

TEST_CASE("cuda conv plan: the algorithm cache's key tells every difference apart") {
  const ConvArgs2d a = conv_args_2d({1, 1}, {1, 1}, {1, 1}, 1);
  auto key = [&] {
    return make_algo_key(0, ConvKind::kForward, kFloat, {4, 32, 28, 28}, {64, 32, 3, 3}, {4, 64, 28, 28}, a, true,
                         false, false);
  };
  const ConvAlgoKey base = key();
  const ConvAlgoKeyHash hash;
  CHECK(key() == base);
  CHECK(hash(key()) == hash(base));
  CHECK(base.x_strides == Dims4{32 * 28 * 28, 28 * 28, 28, 1});
  CHECK(base.y_strides == Dims4{64 * 28 * 28, 28 * 28, 28, 1});

  std::vector<ConvAlgoKey> changed(14, base);
  changed[0].device = 1;
  changed[1].kind = ConvKind::kBackwardData;
  changed[2].kind = ConvKind::kBackwardFilter;
  changed[3].dtype = kHalf;
  changed[4].x[0] = 8;
  changed[5].w[2] = 5;
  changed[6].y[3] = 27;
  changed[7].x_strides[1] = 1;
  changed[8].args.padding[0] = 0;
  changed[9].args.stride[1] = 2;
  changed[10].args.dilation[0] = 2;
  changed[11].args.groups = 2;
  changed[12].deterministic = true;
  changed[13].benchmark = true;
  for (size_t i = 0; i < changed.size(); ++i) {
    CAPTURE(i);
    CHECK_FALSE(changed[i] == base);
    CHECK(hash(changed[i]) != hash(base));  // one word changed: FNV-1a's steps are invertible
  }
  ConvAlgoKey no_tf32 = base;
  no_tf32.allow_tf32 = false;
  CHECK_FALSE(no_tf32 == base);
  // TF32 only matters to float32: a float64 key ignores the flag.
  const Dims4 x{1, 1, 5, 5}, w{1, 1, 3, 3}, y{1, 1, 3, 3};
  CHECK(make_algo_key(0, ConvKind::kForward, kDouble, x, w, y, {}, true, false, false) ==
        make_algo_key(0, ConvKind::kForward, kDouble, x, w, y, {}, false, false, false));
  CHECK_FALSE(make_algo_key(0, ConvKind::kForward, kFloat, x, w, y, {}, true, false, false) ==
              make_algo_key(0, ConvKind::kForward, kFloat, x, w, y, {}, false, false, false));
}

TEST_CASE("cuda conv plan: which algorithms may run") {
  // A report as cuDNN gives it, best first.
  const std::vector<AlgoPerf> report = {
      {6, true, false, ConvMath::kTensorOp, 1 << 20, 0.1f},  // fastest, not deterministic
      {1, false, true, ConvMath::kDefault, 0, -1},            // not supported here
      {2, true, true, ConvMath::kTensorOp, 4096, 0.2f},
      {6, true, false, ConvMath::kDefault, 0, 0.3f},  // listed again under another math mode
      {0, true, true, ConvMath::kDefault, 0, 0.5f},
  };
  std::vector<AlgoChoice> any = usable_algorithms(report, kHalf, false, false);
  CHECK(any == std::vector<AlgoChoice>{{6, ConvMath::kTensorOp, 1 << 20},
                                       {2, ConvMath::kTensorOp, 4096},
                                       {0, ConvMath::kDefault, 0}});
  std::vector<AlgoChoice> det = usable_algorithms(report, kHalf, false, true);
  CHECK(det == std::vector<AlgoChoice>{{2, ConvMath::kTensorOp, 4096}, {0, ConvMath::kDefault, 0}});
  // float32 without TF32 runs everything in FMA math.
  for (const AlgoChoice& c : usable_algorithms(report, kFloat, false, false)) CHECK(c.math == ConvMath::kFma);
  CHECK(usable_algorithms(report, kFloat, true, false)[0].math == ConvMath::kTensorOp);
  CHECK(usable_algorithms({{3, false, true, ConvMath::kDefault, 0, -1}}, kFloat, true, false).empty());
  test::check_error([] { throw_no_deterministic_algorithm(); },
                    "no deterministic convolution algorithms available in CuDNN");

  // Workspaces offered to the timing run: enough for all, then less, down to none.
  CHECK(benchmark_workspace_sizes(report) == std::vector<size_t>{1 << 20, 4096, 0});
  CHECK(benchmark_workspace_sizes({}) == std::vector<size_t>{0});
}

TEST_CASE("cuda conv plan: a workspace that cannot be had falls back to an algorithm needing less") {
  const std::string oom = out_of_memory_message(0, 1 << 30, {1 << 20, 80ull << 30}, 0, 0);

  const std::vector<AlgoChoice> choices = {{7, ConvMath::kDefault, 1000},
                                           {5, ConvMath::kDefault, 2000},  // more than the first: skipped
                                           {4, ConvMath::kDefault, 500},
                                           {1, ConvMath::kDefault, 0}};
  auto with_budget = [&](size_t budget, std::vector<int>* tried) {
    return reserve_first_fitting(choices, [&](const AlgoChoice& c) {
      tried->push_back(c.algo);
      if (c.workspace > budget) throw OutOfMemoryError(oom);
    });
  };
  std::vector<int> tried;
  CHECK(with_budget(5000, &tried) == 0);
  CHECK(tried == std::vector<int>{7});
  tried.clear();
  CHECK(with_budget(600, &tried) == 2);
  CHECK(tried == std::vector<int>{7, 4});
  tried.clear();
  CHECK(with_budget(0, &tried) == 3);
  CHECK(tried == std::vector<int>{7, 4, 1});

  // Any other error stops the search at once.
  tried.clear();
  test::check_error([&] {
    reserve_first_fitting(choices, [&](const AlgoChoice& c) {
      tried.push_back(c.algo);
      throw Error("CUDA error: an illegal memory access was encountered");
    });
  }, "illegal memory access");
  CHECK(tried == std::vector<int>{7});

  // Out of memory to the end: the allocator's error comes through.
  test::check_error([&] { reserve_first_fitting(choices, [&](const AlgoChoice&) { throw OutOfMemoryError(oom); }); },
                    "CUDA out of memory");
  // Any other error is not a reason to try another algorithm.
  int calls = 0;
  test::check_error(
      [&] {
        reserve_first_fitting(choices, [&](const AlgoChoice&) {
          ++calls;
          throw Error("CUDA error: misaligned address");
        });
      },
      "misaligned address");
  CHECK(calls == 1);
}

TEST_CASE("cuda conv plan: an engine that fails at run time gives way to the next one") {
  const std::string oom = "CUDA out of memory. Tried to allocate 1 GiB";
  const std::vector<AlgoChoice> choices{{7, ConvMath::kDefault, 4000}, {4, ConvMath::kTensorOp, 500},
                                        {1, ConvMath::kDefault, 0}};
  std::vector<int> reserved, attempted;
  std::vector<AlgoChoice> failed;
  // Algorithm 7 gets its workspace but cuDNN refuses it at execution; 4 runs.
  size_t ran = run_first_working(
      choices, [&](const AlgoChoice& c) { reserved.push_back(c.algo); },
      [&](const AlgoChoice& c) -> std::optional<std::string> {
        attempted.push_back(c.algo);
        if (c.algo == 7) return std::string("CUDNN_STATUS_NOT_SUPPORTED");
        return std::nullopt;
      },
      &failed);
  CHECK(ran == 1);
  CHECK(reserved == std::vector<int>{7, 4});
  CHECK(attempted == std::vector<int>{7, 4});
  CHECK(failed == std::vector<AlgoChoice>{choices[0]});

  // Out of memory for 7 and a run-time failure of 4: the workspace-free 1 runs.
  reserved.clear(), attempted.clear(), failed.clear();
  ran = run_first_working(
      choices,
      [&](const AlgoChoice& c) {
        reserved.push_back(c.algo);
        if (c.workspace > 1000) throw OutOfMemoryError(oom);
      },
      [&](const AlgoChoice& c) -> std::optional<std::string> {
        attempted.push_back(c.algo);
        if (c.algo == 4) return std::string("CUDNN_STATUS_EXECUTION_FAILED");
        return std::nullopt;
      },
      &failed);
  CHECK(ran == 2);
  CHECK(attempted == std::vector<int>{4, 1});
  CHECK(failed == std::vector<AlgoChoice>{choices[1]});

  // None runs: the error names each algorithm and its failure.
  failed.clear();
  test::check_error(
      [&] {
        run_first_working(
            choices, [](const AlgoChoice&) {},
            [](const AlgoChoice& c) -> std::optional<std::string> { return "status " + std::to_string(c.algo); },
            &failed);
      },
      "cuDNN could not run this convolution with any of its 3 algorithms (algorithm 7: status 7; algorithm 4: "
      "status 4; algorithm 1: status 1)");
  CHECK(failed.size() == 3);
}

TEST_CASE("cuda conv plan: the cache drops algorithms that failed, and the key once none is left") {
  ConvAlgoCache cache;
  const ConvAlgoKey k = make_algo_key(0, ConvKind::kForward, kFloat, {2, 3, 8, 8}, {4, 3, 3, 3}, {2, 4, 6, 6}, {},
                                      false, false, false);
  cache.insert(k, {{1, ConvMath::kFma, 64}, {3, ConvMath::kFma, 0}});
  cache.drop(k, {{1, ConvMath::kFma, 64}});
  REQUIRE(cache.find(k).has_value());
  CHECK(*cache.find(k) == std::vector<AlgoChoice>{{3, ConvMath::kFma, 0}});
  cache.drop(k, {{3, ConvMath::kFma, 0}});
  CHECK_FALSE(cache.find(k).has_value());
  cache.drop(k, {{3, ConvMath::kFma, 0}});  // an absent key: nothing to do
  CHECK(cache.size() == 0);
}

TEST_CASE("cuda conv plan: the algorithm cache keeps the first answer per key") {
  ConvAlgoCache cache;
  const ConvAlgoKey k = make_algo_key(0, ConvKind::kBackwardFilter, kFloat, {2, 3, 8, 8}, {4, 3, 3, 3},
                                      {2, 4, 6, 6}, {}, false, true, false);
  CHECK_FALSE(cache.find(k).has_value());
  cache.insert(k, {{1, ConvMath::kFma, 64}});
  cache.insert(k, {{3, ConvMath::kFma, 0}});
  REQUIRE(cache.find(k).has_value());
  CHECK(*cache.find(k) == std::vector<AlgoChoice>{{1, ConvMath::kFma, 64}});
  ConvAlgoKey other = k;
  other.deterministic = false;
  CHECK_FALSE(cache.find(other).has_value());
  CHECK(cache.size() == 1);
}
