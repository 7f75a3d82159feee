// CUDA parity of the reductions (core/ops/reduce.cpp, minmax.cpp, norm.cpp; kernels in
// cuda/reduce*.cu, cuda/minmax.cu): sum, mean, prod, max/min (everything and per dim, with
// indices), amax/amin, argmax/argmin, var/std, norm, logsumexp, all/any and sum_to_size, over
// every dtype each takes on CUDA and every layout of reduce_layouts.h; NaN and tie rules
// (first index of equal extremes, NaN wins), 0-dim and empty inputs, split reductions above
// 1 << 20 elements, bitwise-repeatable results, gradients, and the dtypes each op refuses.
#include "cuda/reduce_layouts.h"

using namespace ember;
using namespace ember::test;

namespace {

/// The dim choices every reduction is run with: everything, the first dim, the last dim
/// kept, and the first and last together.
std::vector<std::pair<const char*, OneInputOp>> dim_variants(
    const std::function<Tensor(const Tensor&, IntArrayRef, bool)>& reduce_dims,
    const OneInputOp& reduce_all) {
  return {
      {"all dims", reduce_all},
      {"dim 0", [reduce_dims](const Tensor& t) { return reduce_dims(t, {0}, false); }},
      {"dim -1, keepdim", [reduce_dims](const Tensor& t) { return reduce_dims(t, {-1}, true); }},
      {"dims 0 and -1",
       [reduce_dims](const Tensor& t) {
         return t.dim() < 2 ? reduce_dims(t, {0}, false) : reduce_dims(t, {0, -1}, false);
       }},
  };
}

void check_dim_variants(const std::function<Tensor(const Tensor&, IntArrayRef, bool)>& reduce_dims,
                        const OneInputOp& reduce_all, ScalarType t, const LayoutOptions& o = {}) {
  for (const auto& [what, op] : dim_variants(reduce_dims, reduce_all)) {
    INFO("reduce over " << std::string(what));
    check_reduce_layouts(op, t, o);
  }
}

const std::vector<ScalarType> kBigTypes = {kFloat, kHalf, kInt32};
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("cuda sum: every dtype (integers to int64), every layout, dtype argument") {
  for (ScalarType t : kAllTypes) {
    check_dim_variants([](const Tensor& x, IntArrayRef d, bool k) { return x.sum(d, k); },
                       [](const Tensor& x) { return x.sum(); }, t);
    check_parity([](const TensorList& x) { return x[0].sum({1}, false, kDouble); }, {make_input({4, 6}, t)});
  }
  for (ScalarType t : kBigTypes)
    check_dim_variants([](const Tensor& x, IntArrayRef d, bool k) { return x.sum(d, k); },
                       [](const Tensor& x) { return x.sum(); }, t, {.empty = false, .big = true});
}

TEST_CASE("cuda mean: floating dtypes, empty reductions give NaN, integers refused") {
  for (ScalarType t : kFloatTypes)
    check_dim_variants([](const Tensor& x, IntArrayRef d, bool k) { return x.mean(d, k); },
                       [](const Tensor& x) { return x.mean(); }, t, {.big = t == kFloat});
  check_parity([](const TensorList& x) { return x[0].mean({0}, false, kFloat); },
               {make_input({4, 6}, kInt32)});
  for (ScalarType t : kIntegralTypes)
    check_error_parity([](const TensorList& x) { return x[0].mean(); }, {make_input({3}, t)});
}

TEST_CASE("cuda prod: every dtype, with zeros, integer wrap-around") {
  for (ScalarType t : kAllTypes) {
    check_dim_variants([](const Tensor& x, IntArrayRef d, bool) { return x.prod(d[0]); },
                       [](const Tensor& x) { return x.prod(); }, t, {.lo = -2, .hi = 3});
  }
  // Values near 1 keep a million-element float product finite.
  check_reduce_layouts([](const Tensor& x) { return x.prod(); }, kFloat,
                       {.lo = 0.999, .hi = 1.001, .big = true});
  check_reduce_layouts([](const Tensor& x) { return x.prod(0); }, kDouble,
                       {.lo = 0.99, .hi = 1.01, .big = true});
  // int64 products overflow the same way in any order (arithmetic modulo 2^64).
  check_parity([](const TensorList& x) { return x[0].prod(); }, {make_input({200}, kInt64, -9, 10)});
}

TEST_CASE("cuda max/min/amax/amin: every dtype and layout, NaN propagates") {
  for (ScalarType t : kAllTypes) {
    LayoutOptions o{.empty = false};
    check_reduce_layouts([](const Tensor& x) { return x.max(); }, t, o);
    check_reduce_layouts([](const Tensor& x) { return x.min(); }, t, o);
    check_dim_variants([](const Tensor& x, IntArrayRef d, bool k) { return x.amax(d, k); },
                       [](const Tensor& x) { return x.amax(); }, t, o);
    check_dim_variants([](const Tensor& x, IntArrayRef d, bool k) { return x.amin(d, k); },
                       [](const Tensor& x) { return x.amin(); }, t, o);
  }
  for (ScalarType t : kFloatTypes) {
    Tensor x = special_input({7, 40}, t);
    check_parity(
        [](const TensorList& v) {
          return TensorList{v[0].max(), v[0].min(), v[0].amax({1}), v[0].amin({0})};
        },
        {x});
  }
  for (ScalarType t : kBigTypes) {
    check_reduce_layouts([](const Tensor& x) { return x.max(); }, t, {.empty = false, .big = true});
    check_reduce_layouts([](const Tensor& x) { return x.amin({0}); }, t, {.empty = false, .big = true});
  }
}

TEST_CASE("cuda max/min over a dim and argmax/argmin: first index of equal extremes, NaN first") {
  auto with_indices = [](bool is_max, int64_t dim, bool keepdim) {
    return [=](const Tensor& x) {
      auto [v, i] = is_max ? x.max(dim, keepdim) : x.min(dim, keepdim);
      return cat({v.to(kDouble).flatten(), i.to(kDouble).flatten()});
    };
  };
  for (ScalarType t : kAllTypes) {
    LayoutOptions o{.lo = -2, .hi = 3, .empty = false};  // a small range: many ties
    for (bool is_max : {true, false}) {
      check_reduce_layouts(with_indices(is_max, 0, false), t, o);
      check_reduce_layouts(with_indices(is_max, -1, true), t, o);
      if (t == kBool) continue;  // argmax/argmin refuse bool
      check_reduce_layouts([is_max](const Tensor& x) { return is_max ? x.argmax() : x.argmin(); }, t, o);
      check_reduce_layouts([is_max](const Tensor& x) { return is_max ? x.argmax(0) : x.argmin(-1, true); }, t,
                           o);
    }
  }
  for (ScalarType t : kFloatTypes) {
    Tensor x = special_input({9, 50}, t);
    check_parity(
        [](const TensorList& v) {
          auto [mv, mi] = v[0].max(1);
          auto [nv, ni] = v[0].min(0);
          return TensorList{mv, mi, nv, ni, v[0].argmax(), v[0].argmin(1), v[0].t().argmax(0)};
        },
        {x});
  }
  // All equal: index 0 everywhere, also across the chunks of a split reduction.
  for (ScalarType t : {kFloat, kInt64}) {
    check_parity(
        [](const TensorList& x) {
          return TensorList{x[0].argmax(), x[0].argmin(), x[0].argmax(0)};
        },
        {zeros({(1 << 20) + 3}, t)});
    check_parity(
        [](const TensorList& x) {
          return TensorList{x[0].argmax(0), x[0].argmin(1)};
        },
        {ones({(1 << 18) + 1, 5}, t)});
  }
  for (ScalarType t : kBigTypes)
    check_reduce_layouts([](const Tensor& x) { return x.argmax(); }, t,
                         {.lo = -2, .hi = 3, .empty = false, .big = true});
}

TEST_CASE("cuda max/min/argmax: empty inputs and bool argmax raise the CPU's errors") {
  Tensor e = make_input({0, 3}, kFloat);
  check_error_parity([](const TensorList& x) { return x[0].max(); }, {e});
  check_error_parity([](const TensorList& x) { return std::get<0>(x[0].max(0)); }, {e});
  check_error_parity([](const TensorList& x) { return x[0].argmax(); }, {e});
  check_error_parity([](const TensorList& x) { return x[0].amin({0}); }, {e});
  check_parity([](const TensorList& x) { return x[0].amax({1}); }, {e});  // nothing to reduce per output
  check_error_parity([](const TensorList& x) { return x[0].argmax(); }, {make_input({4}, kBool)});
}

TEST_CASE("cuda var/std: corrections, dims, NaN and empty, integers refused") {
  for (ScalarType t : kFloatTypes) {
    for (double c : {0.0, 1.0, 2.5}) {
      INFO("correction " << c);
      check_dim_variants([c](const Tensor& x, IntArrayRef d, bool k) { return x.var(d, Scalar(c), k); },
                         [c](const Tensor& x) { return x.var(std::nullopt, Scalar(c)); }, t);
      check_dim_variants([c](const Tensor& x, IntArrayRef d, bool k) { return x.std(d, Scalar(c), k); },
                         [c](const Tensor& x) { return x.std(std::nullopt, Scalar(c)); }, t);
    }
    check_parity(
        [](const TensorList& x) {
          return TensorList{x[0].var(), x[0].std({1})};
        },
        {special_input({5, 30}, t)});
    check_parity(
        [](const TensorList& x) {
          auto [v, m] = var_mean(x[0], IntArrayRef{0});
          return TensorList{v, m};
        },
        {make_input({6, 4}, t)});
  }
  // An offset far larger than the spread: the corrected two-pass keeps its digits.
  check_reduce_layouts([](const Tensor& x) { return x.var(); }, kFloat,
                       {.lo = 1000, .hi = 1001, .big = true});
  check_reduce_layouts([](const Tensor& x) { return x.std({0}); }, kDouble, {.big = true});
  for (ScalarType t : kIntegralTypes)
    check_error_parity([](const TensorList& x) { return x[0].var(); }, {make_input({3}, t)});
}

TEST_CASE("cuda norm: p = 2, 1, 0, inf, -inf, 3, 0.5 over dims; NaN, empty, integers refused") {
  for (ScalarType t : kFloatTypes) {
    for (double p : {2.0, 1.0, 0.0, kInf, -kInf, 3.0, 0.5}) {
      INFO("p = " << p);
      check_dim_variants([p](const Tensor& x, IntArrayRef d, bool k) { return x.norm(Scalar(p), d, k); },
                         [p](const Tensor& x) { return x.norm(Scalar(p)); }, t);
      check_parity([p](const TensorList& x) { return x[0].norm(Scalar(p), {1}); },
                   {special_input({4, 30}, t)});
    }
  }
  check_reduce_layouts([](const Tensor& x) { return x.norm(); }, kFloat, {.big = true});
  check_reduce_layouts([](const Tensor& x) { return x.norm(kInf, {0}); }, kHalf, {.big = true});
  for (ScalarType t : kIntegralTypes)
    check_error_parity([](const TensorList& x) { return x[0].norm(); }, {make_input({3}, t)});
}

TEST_CASE("cuda logsumexp: every dtype (integers to float), infinities and NaN, empty gives -inf") {
  for (ScalarType t : kAllTypes) {
    check_reduce_layouts([](const Tensor& x) { return x.logsumexp({-1}); }, t);
    check_reduce_layouts([](const Tensor& x) { return x.logsumexp({0}, true); }, t);
  }
  for (ScalarType t : kFloatTypes) {
    check_parity([](const TensorList& x) { return x[0].logsumexp({1}); }, {special_input({6, 25}, t)});
    check_parity([](const TensorList& x) { return x[0].logsumexp({0}); }, {full({5, 3}, -kInf, t)});
    check_parity([](const TensorList& x) { return x[0].logsumexp({0}); },
                 {make_input({3, 4}, t, 80, 90)});  // exp overflows unshifted
  }
  check_reduce_layouts([](const Tensor& x) { return x.logsumexp({0}); }, kFloat, {.big = true});
}

TEST_CASE("cuda all/any: every dtype, bool or uint8 results, empty") {
  for (ScalarType t : kAllTypes) {
    for (bool is_all : {true, false}) {
      check_reduce_layouts([is_all](const Tensor& x) { return is_all ? x.all() : x.any(); }, t,
                           {.lo = 0, .hi = 2});
      check_reduce_layouts([is_all](const Tensor& x) { return is_all ? x.all(0) : x.any(-1, true); }, t,
                           {.lo = 0, .hi = 2});
    }
  }
  // One zero (one nonzero) among a million, in the last split chunk.
  Tensor ones_but_last = ones({(1 << 20) + 3}, kFloat);
  ones_but_last.data_ptr<float>()[(1 << 20) + 1] = 0;
  check_parity(
      [](const TensorList& x) {
        return TensorList{x[0].all(), (x[0] == 0).any(), (x[0] == 2).any()};
      },
      {ones_but_last});
}

TEST_CASE("cuda sum_to_size un-broadcasts as on the CPU") {
  for (ScalarType t : {kFloat, kHalf, kInt64}) {
    check_parity([](const TensorList& x) { return sum_to_size(x[0], {1, 5}); }, {make_input({4, 5}, t)});
    check_parity([](const TensorList& x) { return sum_to_size(x[0], {3, 1}); }, {make_input({2, 3, 4}, t)});
    check_parity(
        [](const TensorList& x) {
          return sum_to_size(x[0].expand({6, 3, 4}), {3, 4});
        },
        {make_input({3, 4}, t)});
  }
}

TEST_CASE("cuda reductions of 0-dim tensors") {
  for (ScalarType t : kAllTypes) {
    Tensor s = make_input({}, t);
    check_parity(
        [](const TensorList& x) {
          return TensorList{x[0].sum(), x[0].prod(0), x[0].max(),         x[0].amin({0}),
                            x[0].all(), x[0].any(0),  x[0].logsumexp({0})};
        },
        {s});
    if (is_floating_point(t))
      check_parity(
          [](const TensorList& x) {
            return TensorList{x[0].mean(), x[0].var(std::nullopt, Scalar(0)), x[0].std(), x[0].norm(),
                              x[0].norm(Scalar(0))};
          },
          {s});
    if (t != kBool)
      check_parity([](const TensorList& x) { return TensorList{x[0].argmax(), x[0].argmin(0)}; }, {s});
  }
}

TEST_CASE("cuda reductions are bitwise repeatable") {
  Tensor x = make_input({(1 << 22) + 7}, kFloat).to(cuda_device());
  Tensor rows = make_input({(1 << 16) + 1, 33}, kFloat).to(cuda_device());
  for (int rep = 0; rep < 3; ++rep) {
    CHECK(x.sum().item<float>() == x.sum().item<float>());
    CHECK(x.var().item<float>() == x.var().item<float>());
    CHECK(x.norm(3).item<float>() == x.norm(3).item<float>());
    CHECK(equal(rows.sum(0), rows.sum(0)));
    CHECK(equal(rows.logsumexp({0}), rows.logsumexp({0})));
  }
}

TEST_CASE("cuda reduction gradients match the CPU") {
  for (ScalarType t : {kFloat, kDouble}) {
    Tensor x = make_input({4, 6}, t);
    check_grad_parity([](const TensorList& v) { return v[0].sum({1}); }, {x});
    check_grad_parity([](const TensorList& v) { return v[0].mean({0}, true); }, {x});
    check_grad_parity([](const TensorList& v) { return v[0].prod(1); }, {x});
    check_grad_parity([](const TensorList& v) { return v[0].prod(); }, {x});
    // Zeros in some rows: prod's backward takes its cumprod path there.
    check_grad_parity([](const TensorList& v) { return (v[0] * (v[0] > 0)).prod(1); }, {x});
    check_grad_parity([](const TensorList& v) { return v[0].max(); }, {x});
    check_grad_parity([](const TensorList& v) { return std::get<0>(v[0].min(0)); }, {x});
    check_grad_parity(
        [](const TensorList& v) {
          return v[0].amax({0, 1});
        },
        {make_input({4, 6}, t, -2, 3).round()});
    check_grad_parity([](const TensorList& v) { return v[0].var({1}); }, {x});
    check_grad_parity([](const TensorList& v) { return v[0].std(IntArrayRef{0}, Scalar(0), true); }, {x});
    for (double p : {2.0, 1.0, kInf, 3.0, 0.5})
      check_grad_parity([p](const TensorList& v) { return v[0].norm(Scalar(p), {1}); }, {x});
    check_grad_parity([](const TensorList& v) { return v[0].logsumexp({1}); }, {x});
    check_grad_parity([](const TensorList& v) { return sum_to_size(v[0].expand({3, 4, 6}), {4, 6}); }, {x});
  }
  check_grad_parity([](const TensorList& v) { return v[0].sum(0); }, {make_input({(1 << 20) + 3}, kFloat)});
}
