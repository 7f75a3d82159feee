// TensorIter and cpu_map: dimension coalescing, broadcasting (stride 0), strided outputs,
// zero-size and 0-dim operands, and the parallel path giving the serial path's results.
#include <atomic>
#include <mutex>

#include "ember/core/cpu/loops.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::values;

namespace {

/// The 1-d runs a TensorIter hands to its loop: (n, strides in bytes per operand).
struct Run {
  int64_t n;
  std::vector<int64_t> strides;
};

std::vector<Run> runs(const TensorIter& it) {
  std::vector<Run> out;
  it.serial_for_each([&](char**, const int64_t* strides, int64_t n) {
    out.push_back({n, std::vector<int64_t>(strides, strides + it.ntensors())});
  });
  return out;
}

/// out = a + 10 b through cpu_map, for float tensors.
void add10(const Tensor& out, const Tensor& a, const Tensor& b, int64_t grain = kGrainSize) {
  TensorIter it(out, {a, b});
  cpu::cpu_map<float, float, float>(it, [](float x, float y) { return x + 10 * y; }, grain);
}

}  // namespace

TEST_CASE("test_tensor_iter: coalescing") {
  // Contiguous operands of any rank collapse to one dimension.
  Tensor a = zeros({2, 3, 4});
  TensorIter it(a, {ones({2, 3, 4})});
  CHECK(it.ndim() == 1);
  CHECK(it.is_1d());
  CHECK(it.numel() == 24);
  CHECK(it.ntensors() == 2);
  std::vector<Run> r = runs(it);
  REQUIRE(r.size() == 1);
  CHECK(r[0].n == 24);
  CHECK(r[0].strides == std::vector<int64_t>{4, 4});  // bytes

  // Size-1 dims are dropped.
  TensorIter ones_it(zeros({1, 5, 1}), {zeros({1, 5, 1}, kDouble)});
  CHECK(ones_it.ndim() == 1);
  CHECK(runs(ones_it)[0].strides == std::vector<int64_t>{4, 8});

  // A transposed input cannot be merged: two dims, inner stride = one row of the original.
  Tensor t = arange(6.).view({2, 3}).t();  // sizes (3, 2), strides (1, 3)
  TensorIter tt(zeros({3, 2}), {t});
  CHECK(tt.ndim() == 2);
  std::vector<Run> rt = runs(tt);
  REQUIRE(rt.size() == 3);
  CHECK(rt[0].n == 2);
  CHECK(rt[0].strides == std::vector<int64_t>{4, 12});

  // A slice of the last dim merges the outer dims only where strides line up:
  // x[:, :, 0:2] of a (2, 3, 4) tensor has strides (12, 4, 1) and sizes (2, 3, 2).
  Tensor s = zeros({2, 3, 4}).narrow(2, 0, 2);
  TensorIter ts(zeros({2, 3, 2}), {s});
  CHECK(ts.ndim() == 2);  // (2) inner, then (3*2) outer: 12 = 3 * 4 for both operands
  CHECK(runs(ts).size() == 6);

  // A 0-dim output: one run of one element.
  TensorIter z(zeros({}), {ones({})});
  CHECK(z.ndim() == 0);
  CHECK(z.numel() == 1);
  CHECK(runs(z).size() == 1);
  CHECK(runs(z)[0].n == 1);
}

TEST_CASE("test_tensor_iter: broadcasting gives stride 0") {
  Tensor out = zeros({3, 4});
  Tensor row = arange(4.);            // broadcast over rows
  Tensor col = arange(3.).view({3, 1});  // broadcast over columns
  TensorIter it(out, {row, col});
  CHECK(it.ndim() == 2);
  std::vector<Run> r = runs(it);
  REQUIRE(r.size() == 3);
  CHECK(r[0].n == 4);
  CHECK(r[0].strides == std::vector<int64_t>{4, 4, 0});
  add10(out, row, col);  // out[i][j] = j + 10 i
  check_close(out, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  // A 0-dim input broadcasts everywhere, and fewer dims are prepended with 1s.
  Tensor o2 = zeros({2, 2, 2});
  add10(o2, tensor(1.f), arange(2.));
  check_close(o2, {1, 11, 1, 11, 1, 11, 1, 11});
  // Inputs that do not broadcast: PyTorch's text.
  check_error([] { TensorIter it2(zeros({2, 3}), {zeros({4})}); },
              "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1");
  check_error([] { TensorIter it3(zeros({3}), {zeros({2, 3})}); }, "TensorIter: input has more dims than the output");
}

TEST_CASE("test_tensor_iter: strided outputs") {
  // Write into a transposed view and a column of a bigger tensor.
  Tensor base = zeros({3, 2});
  Tensor out = base.t();  // (2, 3) with strides (1, 2)
  add10(out, arange(6.).view({2, 3}), zeros({1}));
  // out[i][j] = 3 i + j  ->  base[j][i]
  check_close(base, {0, 3, 1, 4, 2, 5});
  Tensor big = zeros({4, 5});
  Tensor column = big.select(1, 3);
  add10(column, arange(4.), ones({4}));
  std::vector<double> v = values(big);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) CHECK(v[i * 5 + j] == (j == 3 ? i + 10.0 : 0.0));
  // Every-other element, in a 3-d layout.
  Tensor b3 = zeros({2, 4, 6});
  Tensor view = b3.slice(2, 0, 6, 2);  // (2, 4, 3), strides (24, 6, 2)
  add10(view, ones({2, 4, 3}), zeros({}));
  std::vector<double> v3 = values(b3);
  for (size_t k = 0; k < v3.size(); ++k) CHECK(v3[k] == (k % 2 == 0 ? 1.0 : 0.0));
}

TEST_CASE("test_tensor_iter: zero-size operands") {
  Tensor out = zeros({0, 3});
  TensorIter it(out, {zeros({3})});
  CHECK(it.numel() == 0);
  int calls = 0;
  it.for_each([&](char**, const int64_t*, int64_t) { ++calls; });
  it.serial_for_each([&](char**, const int64_t*, int64_t) { ++calls; });
  CHECK(calls == 0);
  add10(zeros({4, 0}), zeros({4, 0}), zeros({0}));  // nothing to do, no crash
  int64_t seen = 0;
  parallel_for(0, 1, [&](int64_t b, int64_t e) { seen += e - b; });
  CHECK(seen == 0);
}

TEST_CASE("test_tensor_iter: parallel path equals serial path") {
  int saved = get_num_threads();
  set_num_threads(4);
  // A non-trivial layout: transposed input broadcast against a row, 3-d output view.
  Tensor a = rand({60, 50, 40}).permute({2, 0, 1});  // (40, 60, 50), non-contiguous
  Tensor b = rand({50});
  Tensor serial = zeros({40, 60, 50}), parallel = zeros({40, 60, 50});
  add10(serial, a, b, /*grain=*/int64_t{1} << 40);  // one thread
  add10(parallel, a, b, /*grain=*/64);              // split over threads
  CHECK(values(serial) == values(parallel));
  // The values themselves against a plain loop.
  std::vector<double> va = values(a), vb = values(b), vs = values(serial);
  bool ok = true;
  for (size_t k = 0; k < vs.size(); ++k)
    ok = ok && std::fabs(vs[k] - (va[k] + 10 * vb[k % 50])) <= 1e-5;
  CHECK(ok);

  // Each element visited exactly once across threads.
  Tensor counts = zeros({1000}, kInt);
  TensorIter it(counts, {});
  std::atomic<int64_t> total{0};
  it.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        for (int64_t i = 0; i < n; ++i) ++*reinterpret_cast<int32_t*>(data[0] + i * strides[0]);
        total += n;
      },
      /*grain=*/10);
  CHECK(total == 1000);
  for (double c : values(counts)) CHECK(c == 1);

  // parallel_for covers [0, n) exactly once.
  std::vector<int> hit(100000, 0);
  parallel_for(100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hit[i];
  });
  bool once = true;
  for (int h : hit) once = once && h == 1;
  CHECK(once);
  set_num_threads(saved);
  check_error([] { set_num_threads(0); }, "Expected positive number of threads");
}

TEST_CASE("test_tensor_iter: cpu_map with mixed types and in-place aliasing") {
  // Out and in may be different C++ types (the caller chooses them).
  Tensor out = zeros({5}, kDouble);
  TensorIter it(out, {arange(5, kInt)});
  cpu::cpu_map<double, int32_t>(it, [](int32_t v) { return v * 0.5; });
  check_close(out, {0, 0.5, 1, 1.5, 2});
  // Out aliasing its input elementwise (x = x * x) is allowed.
  Tensor x = arange(5.);
  TensorIter ix(x, {x});
  cpu::cpu_map<float, float>(ix, [](float v) { return v * v; });
  check_close(x, {0, 1, 4, 9, 16});
  // unary_kernel / binary_kernel helpers.
  Tensor u = empty({3});
  cpu::unary_kernel<float, float>(tensor({1.f, 2.f, 3.f}), u, [](float v) { return -v; });
  check_close(u, {-1, -2, -3});
  Tensor bo = empty({2, 2}, kBool);
  cpu::binary_kernel<bool, float, float>(tensor({{1.f, 5.f}, {3.f, 0.f}}), tensor({2.f, 2.f}), bo,
                                        [](float p, float q) { return p > q; });
  check_close(bo, {0, 1, 1, 0});
  // A nullary map (fill) over a strided view.
  Tensor base = zeros({3, 3});
  TensorIter fill = TensorIter::nullary(base.diagonal());
  cpu::cpu_map<float>(fill, [] { return 7.f; });
  check_close(base, {7, 0, 0, 0, 7, 0, 0, 0, 7});
}

// The constructor's fast path (every operand contiguous with the output's shape) must set up
// what the general broadcasting + coalescing code would: one dense run, none for one element.
TEST_CASE("test_tensor_iter: contiguous same-shape fast path matches the general path") {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{1}, {1, 1}, {7}, {1, 3, 1, 4}, {2, 1}, {5, 6, 7}}) {
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    Tensor out = zeros(shape, kDouble), a = arange(numel).view(shape).to(kFloat);
    TensorIter fast(out, {a});
    // A stride-0 view of a scalar forces the general path; its coalesced shape is the same.
    TensorIter general(out, {ones({}).expand(shape)});
    CHECK(fast.numel() == general.numel());
    CHECK(fast.ndim() == general.ndim());
    CHECK(fast.shape().equals(general.shape()));
    CHECK(fast.strides(0).equals(general.strides(0)));
    if (fast.ndim() == 1) CHECK(fast.strides(1).vec() == std::vector<int64_t>{4});
    std::vector<Run> r = runs(fast);
    REQUIRE(r.size() == 1);
    CHECK(r[0].n == fast.numel());
    CHECK(fast.data(1) == static_cast<char*>(a.data_ptr()));
  }
  // Same numel but another shape is still an error, not a dense run.
  check_error([] { TensorIter it(zeros({3, 4}), {zeros({12})}); }, "must match the size of tensor b");
  // Results through a kernel: out = a + 10 b on 1-element and odd-sized tensors.
  for (int64_t n : {1, 3, 33}) {
    Tensor a = arange(n).to(kFloat), b = full({n}, 2.0), out = empty({n});
    add10(out, a, b);
    for (int64_t i = 0; i < n; ++i) CHECK(out[i].item<float>() == static_cast<float>(i) + 20.0f);
  }
  // binary_kernel's tiny dense path and the iterator paths it stands beside: dense, transposed,
  // broadcast and mixed-type operands of odd sizes give the reference loop's values.
  auto sub10 = [](const Tensor& a, const Tensor& b, Tensor& out) {
    cpu::binary_kernel<float, float, float>(a, b, out, [](float x, float y) { return x - 10 * y; });
  };
  for (int64_t n : {1, 3, 33}) {
    Tensor a = arange(n * 5).to(kFloat).view({n, 5}), b = full({n, 5}, 0.5, kFloat);
    Tensor out = empty({n, 5});
    sub10(a, b, out);
    Tensor at = arange(n * 5).to(kFloat).view({5, n}).t();  // transposed: general path
    Tensor out_t = empty({n, 5});
    sub10(at, b, out_t);
    Tensor row = arange(5).to(kFloat), out_b = empty({n, 5});  // broadcast: general path
    sub10(a, row.expand({n, 5}), out_b);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        CHECK(out[i][j].item<float>() == static_cast<float>(i * 5 + j) - 5.0f);
        CHECK(out_t[i][j].item<float>() == static_cast<float>(j * n + i) - 5.0f);
        CHECK(out_b[i][j].item<float>() == static_cast<float>(i * 5 + j) - 10.0f * static_cast<float>(j));
      }
  }
  Tensor d = empty({3}, kDouble);
  cpu::binary_kernel<double, float, int64_t>(arange(3).to(kFloat), full({3}, 2, kLong), d,
                                             [](float x, int64_t y) { return static_cast<double>(x) * y; });
  check_close(d, {0, 2, 4});
}

TEST_CASE("test_tensor_iter: an empty operand whose stride in bytes overflows int64") {
  // fuzz_ops built such a view with as_strided; UBSan saw the byte stride overflow. An empty
  // tensor is never stepped along, so the iterator takes 0 for that stride.
  Tensor x = zeros({4}).as_strided({2, 0}, {int64_t{1} << 61, 1});
  CHECK(x.numel() == 0);
  Tensor y = x.masked_fill(x.gt(0), 1);
  CHECK(y.sizes().vec() == std::vector<int64_t>{2, 0});
}
