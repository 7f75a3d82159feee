// Reductions of core/ops/reduce.cpp: sum, mean, prod, var/std/var_mean, logsumexp, all/any.
// Values against plain loops (reduce_ref.h) over all dims, one dim, several dims, keepdim,
// transposed inputs, 0-dim and empty tensors; float64 gradcheck/gradgradcheck; dtype rules;
// error texts; thread-count independence on large inputs.
#include <cmath>
#include <limits>
#include <numeric>

#include "op_check.h"
#include "reduce_ref.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::ref_reduce;
using ember::test::shape;
using ember::test::values;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double ref_sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double ref_prod(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<>());
}
double ref_var(const std::vector<double>& v, double correction) {
  double m = ref_sum(v) / v.size(), ss = 0;
  for (double e : v) ss += (e - m) * (e - m);
  return ss / std::max(0.0, v.size() - correction);
}
double ref_lse(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += std::exp(e);
  return std::log(s);
}

/// The dim lists every reduction is checked over, for a 3-d input.
const std::vector<std::vector<int64_t>> kDimSets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {2, 0}, {0, 1, 2}};

/// A [2, 3, 4] float64 input and its transposed (non-contiguous) twin with the same shape.
std::vector<Tensor> inputs_234() {
  manual_seed(7);
  Tensor a = randn({2, 3, 4}, kDouble);
  Tensor b = randn({4, 3, 2}, kDouble).permute({2, 1, 0});
  REQUIRE(!b.is_contiguous());
  return {a, b};
}

}  // namespace

TEST_CASE("sum over dims, keepdim, non-contiguous") {
  for (const Tensor& x : inputs_234()) {
    for (const auto& dims : kDimSets) {
      for (bool keepdim : {false, true}) {
        Tensor s = x.sum(dims, keepdim);
        check_close(s, ref_reduce(x, dims, ref_sum), 1e-12);
        if (keepdim) CHECK(s.dim() == 3);
      }
    }
    check_close(x.sum(), {ref_sum(values(x))}, 1e-12);
  }
  CHECK(shape(ones({2, 3, 4}).sum({0, 2}, true)) == std::vector<int64_t>{1, 3, 1});
  CHECK(shape(ones({2, 3, 4}).sum({1})) == std::vector<int64_t>{2, 4});
}

TEST_CASE("sum dtypes: integers and bool accumulate to int64") {
  Tensor i8 = tensor({100, 100, 100}, kInt8);
  Tensor s = i8.sum();
  CHECK(s.dtype() == kLong);
  CHECK(s.item<int64_t>() == 300);  // no int8 overflow
  CHECK(tensor({true, true, false}).sum().item<int64_t>() == 2);
  CHECK(tensor({1.5, 2.5}).sum(kInt32).dtype() == kInt32);
  CHECK(tensor({1.5f, 2.5f}).sum(kDouble).dtype() == kDouble);
  CHECK(tensor({1.0f}, kHalf).sum().dtype() == kHalf);
  check_close(arange(10, kInt32).view({2, 5}).sum({1}), {10, 35});
}

TEST_CASE("sum and mean of 0-dim and empty tensors") {
  Tensor z = tensor(3.5);
  check_close(z.sum(), {3.5});
  check_close(z.sum({0}), {3.5});
  check_close(z.mean(), {3.5});
  CHECK(z.sum({0}, true).dim() == 0);
  Tensor e = zeros({0, 3});
  check_close(e.sum(), {0.0});
  check_close(e.sum({0}), {0, 0, 0});
  CHECK(shape(e.sum({1})) == std::vector<int64_t>{0});
  check_close(e.mean(), {kNan});
  check_close(e.mean({0}), {kNan, kNan, kNan});
  check_close(e.prod(), {1.0});
  check_close(e.prod(0), {1, 1, 1});
}

TEST_CASE("mean values, dtype argument and integer error") {
  for (const Tensor& x : inputs_234())
    for (const auto& dims : kDimSets)
      check_close(x.mean(dims), ref_reduce(x, dims, [](auto& v) { return ref_sum(v) / v.size(); }), 1e-12);
  check_close(tensor({1, 2}).mean(kFloat), {1.5});
  check_error(
      [] {
        tensor({1, 2}).mean();
      },
      "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
      "dtype. Got: Long");
  check_error(
      [] {
        tensor({1.0, 2.0}).mean(kLong);
      },
      "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
      "dtype. Got: Long");
}

TEST_CASE("sum and mean gradients") {
  for (bool keepdim : {false, true}) {
    check_grad([&](const TensorList& in) { return in[0].sum({1}, keepdim); }, {rand_leaf({3, 4})});
    check_grad([&](const TensorList& in) { return in[0].mean({0, 2}, keepdim); }, {rand_leaf({2, 3, 2})});
  }
  check_grad([](const TensorList& in) { return in[0].t().sum({0}); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].mean(); }, {rand_leaf({3, 4})});
  check_gradgrad([](const TensorList& in) { return (in[0].sum({1}) * in[0].sum({1})); }, {rand_leaf({3, 4})});
}

TEST_CASE("dim errors") {
  Tensor x = zeros({2, 3});
  check_error([&] { x.sum({2}); }, "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_error([&] { x.sum({0, -2}); }, "dim 0 appears multiple times in the list of dims");
  check_error([&] { x.prod(-3); }, "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
  check_error([&] { x.var(IntArrayRef{2}); }, "Dimension out of range");
  check_error([&] { x.logsumexp({5}); }, "Dimension out of range");
  check_error([] { tensor(1.0).sum({1}); },
              "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST_CASE("prod values and dtypes") {
  manual_seed(3);
  Tensor x = rand({3, 4}, kDouble) + 0.5;
  check_close(x.prod(), {ref_prod(values(x))}, 1e-12);
  for (int64_t d : {0, 1, -1})
    for (bool keepdim : {false, true}) {
      Tensor p = x.prod(d, keepdim);
      check_close(p, ref_reduce(x, {d}, ref_prod), 1e-12);
      CHECK(p.dim() == (keepdim ? 2 : 1));
    }
  check_close(x.t().prod(0), ref_reduce(x.t(), {0}, ref_prod), 1e-12);
  Tensor i = tensor({2, 3, 4}, kInt8);
  CHECK(i.prod().dtype() == kLong);
  CHECK(i.prod().item<int64_t>() == 24);
  CHECK(tensor({true, false}).prod().item<int64_t>() == 0);
  CHECK(tensor({1, 2}, kInt8).prod(0, false, kInt16).dtype() == kInt16);
  check_close(tensor(4.0).prod(0), {4.0});
}

TEST_CASE("prod gradient, with and without zeros") {
  // d/dx_i prod(x) = product of the others: [2, 0, 3] -> [0, 6, 0]; with two zeros all 0.
  Tensor a = tensor({2.0, 0.0, 3.0}, kDouble).requires_grad_();
  a.prod().backward();
  check_close(a.grad(), {0, 6, 0});
  Tensor b = tensor({0.0, 2.0, 0.0}, kDouble).requires_grad_();
  b.prod().backward();
  check_close(b.grad(), {0, 0, 0});
  check_grad([](const TensorList& in) { return in[0].prod(); }, {rand_leaf({2, 3}, 0.5, 1.5)});
  for (bool keepdim : {false, true}) {
    check_grad([&](const TensorList& in) { return in[0].prod(1, keepdim); }, {rand_leaf({3, 4}, 0.5, 1.5)});
    check_grad([&](const TensorList& in) { return in[0].t().prod(0, keepdim); },
               {rand_leaf({3, 4}, 0.5, 1.5)});
  }
  // Zeros: one zero in a row, two zeros in another, a zero in a full reduction.
  Tensor z = from_values({1.5, 0, 2, -1, 0, 0, 0.5, 3, 1, 2, -2, 0.7}, {3, 4}).requires_grad_();
  check_grad([](const TensorList& in) { return in[0].prod(1); }, {z});
  check_grad([](const TensorList& in) { return in[0].prod(0, true); }, {z});
  Tensor z1 = from_values({1.5, 0, 2, -1, 0.5, 3}, {2, 3}).requires_grad_();
  check_grad([](const TensorList& in) { return in[0].prod(); }, {z1});
  check_gradgrad([](const TensorList& in) { return in[0].prod(); }, {rand_leaf({2, 3}, 0.5, 1.5)});
  check_gradgrad([](const TensorList& in) { return in[0].prod(1); }, {rand_leaf({2, 3}, 0.5, 1.5)});
  check_gradgrad([](const TensorList& in) { return in[0].prod(1); }, {z1});
}

TEST_CASE("var and std values") {
  for (const Tensor& x : inputs_234()) {
    for (const auto& dims : kDimSets) {
      for (bool unbiased : {true, false}) {
        double c = unbiased ? 1 : 0;
        check_close(x.var(dims, unbiased), ref_reduce(x, dims, [c](auto& v) { return ref_var(v, c); }),
                    1e-12);
        check_close(x.std(dims, unbiased, true),
                    ref_reduce(x, dims, [c](auto& v) { return std::sqrt(ref_var(v, c)); }), 1e-12);
      }
      check_close(x.var(IntArrayRef(dims), Scalar(2)),
                  ref_reduce(x, dims, [](auto& v) { return ref_var(v, 2); }), 1e-12);
    }
  }
  // [1, 2, 3, 4]: mean 2.5, squared deviations sum 5: var 5/3 (unbiased), 5/4, std sqrt of those.
  Tensor v = tensor({1.0, 2.0, 3.0, 4.0});
  check_close(v.var(), {5.0 / 3});
  check_close(v.var(false), {1.25});
  check_close(v.std(), {std::sqrt(5.0 / 3)});
  check_close(v.var(std::nullopt, Scalar(0.5)), {5.0 / 3.5});
  check_close(v.std(std::nullopt, std::nullopt), {std::sqrt(5.0 / 3)});
  check_close(v.var(std::nullopt, Scalar(4)), {kInf});  // N - correction = 0
  CHECK(shape(ones({2, 3}).var(IntArrayRef{1}, true, true)) == std::vector<int64_t>{2, 1});
}

TEST_CASE("var edge cases: one element, empty, 0-dim, integer error") {
  check_close(tensor({3.0}).var(), {kNan});  // 0 / 0
  check_close(tensor({3.0}).var(false), {0.0});
  check_close(zeros({0, 3}).var(), {kNan});
  check_close(zeros({0, 3}).var(IntArrayRef{0}), {kNan, kNan, kNan});
  CHECK(shape(zeros({0, 3}).std(IntArrayRef{1})) == std::vector<int64_t>{0});
  check_close(tensor(5.0).var(), {kNan});
  check_close(tensor(5.0).var(false), {0.0});
  check_close(tensor({1.0, kInf}).var(), {kNan});
  check_error([] { tensor({1, 2}).var(); }, "std and var only support floating point and complex dtypes");
  check_error([] { tensor({1, 2}).std(); }, "std and var only support floating point and complex dtypes");
  check_error([] { var_mean(tensor({1, 2})); }, "std and var only support floating point and complex dtypes");
  CHECK(tensor({1.0f, 2.0f}, kHalf).var().dtype() == kHalf);
}

TEST_CASE("var_mean") {
  Tensor x = inputs_234()[1];
  auto [v, m] = var_mean(x, IntArrayRef{1}, Scalar(0), true);
  check_close(v, ref_reduce(x, {1}, [](auto& g) { return ref_var(g, 0); }), 1e-12);
  check_close(m, ref_reduce(x, {1}, [](auto& g) { return ref_sum(g) / g.size(); }), 1e-12);
  CHECK(shape(v) == std::vector<int64_t>{2, 1, 4});
  auto [va, ma] = var_mean(tensor({1.0, 2.0, 3.0, 4.0}));
  check_close(va, {5.0 / 3});
  check_close(ma, {2.5});
}

TEST_CASE("var and std gradients") {
  for (bool keepdim : {false, true}) {
    check_grad([&](const TensorList& in) { return in[0].var(IntArrayRef{1}, true, keepdim); },
               {rand_leaf({3, 4})});
    check_grad(
        [&](const TensorList& in) {
          return in[0].std(IntArrayRef{0, 2}, false, keepdim);
        },
        {rand_leaf({2, 3, 2})});
  }
  check_grad([](const TensorList& in) { return in[0].var(); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].std(); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].t().var(std::nullopt, Scalar(2)); },
             {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return std::get<0>(var_mean(in[0], IntArrayRef{1})); },
             {rand_leaf({3, 4})});
  check_grad(
      [](const TensorList& in) { return std::get<1>(var_mean(in[0], IntArrayRef{0}, std::nullopt, true)); },
      {rand_leaf({3, 4})});
  check_gradgrad([](const TensorList& in) { return in[0].var(IntArrayRef{1}); }, {rand_leaf({3, 4})});
  check_gradgrad([](const TensorList& in) { return in[0].std(); }, {rand_leaf({3, 4})});
  // std of a constant is 0; PyTorch's gradient there is 0, not 0 * inf.
  Tensor c = full({3}, 2.0, kDouble).requires_grad_();
  c.std().backward();
  check_close(c.grad(), {0, 0, 0});
}

TEST_CASE("logsumexp values, stability and infinities") {
  for (const Tensor& x : inputs_234())
    for (const auto& dims : kDimSets)
      for (bool keepdim : {false, true})
        check_close(x.logsumexp(dims, keepdim), ref_reduce(x, dims, ref_lse), 1e-12);
  // log(e^1000 + e^1000) = 1000 + log 2, which exp overflows without the max shift.
  check_close(tensor({1000.0, 1000.0}).logsumexp({0}), {1000 + std::log(2.0)});
  check_close(tensor({-1000.0, -1000.0}).logsumexp({0}), {-1000 + std::log(2.0)});
  check_close(tensor({1.0, -kInf, 3.0}).logsumexp({0}), {std::log(std::exp(1.0) + std::exp(3.0))});
  check_close(tensor({-kInf, -kInf}).logsumexp({0}), {-kInf});
  check_close(tensor({kInf, kInf}).logsumexp({0}), {kInf});
  check_close(tensor({kInf, 1.0}).logsumexp({0}), {kInf});
  check_close(tensor({1.0, kNan}).logsumexp({0}), {kNan});
  check_close(tensor({kNan, -kInf}).logsumexp({0}), {kNan});
  check_close(zeros({0, 3}).logsumexp({0}), {-kInf, -kInf, -kInf});
  check_close(tensor(5.0).logsumexp({0}), {5.0});
  Tensor i = tensor({1, 2});
  CHECK(i.logsumexp({0}).dtype() == kFloat);
  check_close(i.logsumexp({0}), {std::log(std::exp(1.0) + std::exp(2.0))});
}

TEST_CASE("logsumexp gradients") {
  for (bool keepdim : {false, true})
    check_grad([&](const TensorList& in) { return in[0].logsumexp({1}, keepdim); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].t().logsumexp({0, 1}); }, {rand_leaf({3, 4})});
  check_gradgrad([](const TensorList& in) { return in[0].logsumexp({0}); }, {rand_leaf({3, 4})});
  // d/dx logsumexp = softmax: [0, log 3] -> [1/4, 3/4].
  Tensor x = tensor({0.0, std::log(3.0)}, kDouble).requires_grad_();
  x.logsumexp({0}).backward();
  check_close(x.grad(), {0.25, 0.75}, 1e-12);
}

TEST_CASE("16-bit floats reduce in float and keep their dtype") {
  // [1.5, -2, 3.25, 0.5] is exact in both formats: sum 3.25, max 3.25 at 2, mean 0.8125.
  for (ScalarType t : {kHalf, kBFloat16}) {
    Tensor x = tensor({1.5, -2.0, 3.25, 0.5}).to(t);
    CHECK(x.sum().dtype() == t);
    check_close(x.sum(), {3.25});
    check_close(x.mean(), {0.8125});
    check_close(x.amax(), {3.25});
    CHECK(x.argmax().item<int64_t>() == 2);
    check_close(x.cumsum(0), {1.5, -0.5, 2.75, 3.25});
    check_close(std::get<0>(x.sort()), {-2, 0.5, 1.5, 3.25});
    check_close(x.prod(), {-4.875});
    CHECK(x.var().dtype() == t);
    check_close(x.logsumexp({0}), {ref_lse({1.5, -2, 3.25, 0.5})}, 2e-2, 1e-2);
  }
}

TEST_CASE("all and any") {
  Tensor x = tensor({{1, 0, 2}, {3, 4, 5}});
  CHECK(x.all().item<bool>() == false);
  CHECK(x.any().item<bool>() == true);
  check_close(x.all(1), {0, 1});
  check_close(x.any(0, true), {1, 1, 1});
  CHECK(x.all(1).dtype() == kBool);
  CHECK(tensor({1, 2}, kUInt8).all().dtype() == kUInt8);
  CHECK(zeros({0}).all().item<bool>() == true);
  CHECK(zeros({0}).any().item<bool>() == false);
  CHECK(tensor({kNan}).all().item<bool>() == true);
}

TEST_CASE("large reductions do not depend on the thread count") {
  manual_seed(11);
  Tensor x = randn({100003}, kFloat);
  Tensor m = randn({317, 331}, kFloat);
  int saved = get_num_threads();
  auto run = [&] {
    return TensorList{x.sum(),
                      x.mean(),
                      x.var(),
                      x.std(),
                      x.logsumexp({0}),
                      x.prod(),
                      x.norm(),
                      x.amax(),
                      x.argmax(),
                      x.cumsum(0),
                      m.sum({0}),
                      m.sum({1}),
                      m.var(IntArrayRef{0}),
                      m.t().sum({1}),
                      m.amax({0}),
                      std::get<1>(m.max(0)),
                      m.logsumexp({0}),
                      m.norm(3, {0})};
  };
  set_num_threads(1);
  TensorList one = run();
  set_num_threads(2);
  TensorList two = run();
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) {
    INFO("result " << i);
    CHECK(equal(one[i], two[i]));
  }
  // The large sum equals a double-precision loop (ember accumulates floats in double).
  check_close(one[0], {ref_sum(values(x))}, 1e-3, 1e-6);
  check_close(one[10], ref_reduce(m, {0}, ref_sum), 1e-4, 1e-6);
  check_close(one[4], {ref_lse(values(x))}, 1e-4, 1e-6);
}

TEST_CASE("outer reductions (a dense kept dim) match a plain loop") {
  // Sum over dim 0 of [N, M] folds blocks of neighbouring outputs together, each output
  // seeing its elements in order; the transposed copy reduces dense rows instead.
  manual_seed(5);
  Tensor m = randn({1000, 130}, kFloat);
  Tensor tc = m.t().contiguous();
  check_close(m.sum({0}), ref_reduce(m, {0}, ref_sum), 1e-4, 1e-6);
  check_close(m.sum({0}), tc.sum({1}), 1e-4, 1e-6);
  check_close(m.var(IntArrayRef{0}), tc.var(IntArrayRef{1}), 1e-6, 1e-6);
  check_close(m.amax({0}), tc.amax({1}), 0, 0);
  CHECK(equal(std::get<1>(m.max(0)), std::get<1>(tc.max(1))));
  Tensor m3 = randn({7, 9, 70}, kDouble);
  check_close(m3.sum({0, 1}), ref_reduce(m3, {0, 1}, ref_sum), 1e-10);
  check_close(m3.sum({1}), ref_reduce(m3, {1}, ref_sum), 1e-10);
  check_close(m3.logsumexp({0, 1}), ref_reduce(m3, {0, 1}, ref_lse), 1e-10);
}

TEST_CASE("autograd node names are PyTorch's") {
  // python: type(x.max().grad_fn).__name__ etc. for x = torch.rand(2, 3, requires_grad=True)
  Tensor x = rand({2, 3}, kDouble).requires_grad_();
  auto name = [](const Tensor& t) { return t.grad_fn()->name(); };
  CHECK(name(x.sum()) == "SumBackward0");
  CHECK(name(x.sum({1})) == "SumBackward1");
  CHECK(name(x.mean()) == "MeanBackward0");
  CHECK(name(x.mean({1})) == "MeanBackward1");
  CHECK(name(x.prod()) == "ProdBackward0");
  CHECK(name(x.prod(1)) == "ProdBackward1");
  CHECK(name(x.max()) == "MaxBackward1");
  CHECK(name(x.min()) == "MinBackward1");
  CHECK(name(std::get<0>(x.max(1))) == "MaxBackward0");
  CHECK(name(x.amax({1})) == "AmaxBackward0");
  CHECK(name(x.amin()) == "AminBackward0");
  CHECK(name(x.norm()) == "NormBackward1");
  CHECK(name(x.var()) == "VarBackward0");
  CHECK(name(x.std(IntArrayRef{1})) == "StdBackward0");
  CHECK(name(x.logsumexp({1})) == "LogsumexpBackward0");
  CHECK(name(x.cumsum(1)) == "CumsumBackward0");
  CHECK(name(x.cumprod(1)) == "CumprodBackward0");
  CHECK(name(std::get<0>(x.sort())) == "SortBackward0");
  CHECK(name(std::get<0>(x.topk(1))) == "TopkBackward0");
}

// Found by the big-tensor test (issue 10): sum/prod of an integer tensor converted the whole
// input to int64 first — 17 GiB and minutes for 2^31 uint8 elements. The kernel now widens each
// element as it reads it; values, wrapping and the memory it takes are checked here. Integer
// folds run in uint64 (int64 overflow was undefined behaviour, found by UBSan on this test).
TEST_CASE("test_reduce: integer and bool sums widen element by element, with int64 wrapping") {
  // int8 negatives sign-extend; uint8 values above 127 stay positive.
  Tensor i8 = from_values({-128, -1, 5, 127}, {2, 2}, kChar);
  CHECK(i8.sum().dtype() == kLong);
  CHECK(i8.sum().item<int64_t>() == 3);
  CHECK(values(i8.sum(std::vector<int64_t>{0})) == std::vector<double>{-123, 126});
  CHECK(values(i8.t().sum(std::vector<int64_t>{1}, true)) == std::vector<double>{-123, 126});
  CHECK(i8.prod().item<int64_t>() == -128 * -1 * 5 * 127);
  CHECK(values(i8.prod(1)) == std::vector<double>{128, 635});
  Tensor u8 = from_values({200, 255, 1}, {3}, kByte);
  CHECK(u8.sum().item<int64_t>() == 456);
  CHECK(u8.prod().item<int64_t>() == 51000);
  CHECK(u8.sum(kByte).item<uint8_t>() == 456 % 256);  // an explicit dtype converts first
  Tensor b = from_values({1, 0, 1, 1}, {4}, kBool);
  CHECK(b.sum().dtype() == kLong);
  CHECK(b.sum().item<int64_t>() == 3);
  CHECK(b.prod().item<int64_t>() == 0);
  // int64 arithmetic wraps as PyTorch's does: INT64_MAX + 1 is INT64_MIN, 2^62 * 4 is 0.
  const int64_t max = std::numeric_limits<int64_t>::max();
  Tensor big = empty({2}, kLong);
  big.index_put_({0}, max);
  big.index_put_({1}, 1);
  CHECK(big.sum().item<int64_t>() == std::numeric_limits<int64_t>::min());
  big.index_put_({0}, int64_t{1} << 62);
  big.index_put_({1}, 4);
  CHECK(big.prod().item<int64_t>() == 0);
  // Narrower integer results wrap too: int32's maximum + 1 summed as int32.
  Tensor i32 = from_values({2147483647, 1}, {2}, kInt);
  CHECK(i32.sum(kInt).item<int32_t>() == std::numeric_limits<int32_t>::min());
  CHECK(i32.sum().item<int64_t>() == 2147483648);
  // Long runs (several lanes and chunks): every element counts.
  Tensor ramp = arange(100000, kInt);
  CHECK(ramp.sum().item<int64_t>() == int64_t{99999} * 100000 / 2);
}

TEST_CASE("test_reduce: an integer sum does not copy its input to int64") {
  if (std::getenv("EMBER_NO_ALLOCATOR_CACHE") != nullptr) {
    MESSAGE("skipped: EMBER_NO_ALLOCATOR_CACHE is set (no cache to measure the footprint with)");
    return;
  }
  Tensor x = ones({1 << 22}, kByte);  // 4 MiB; an int64 copy would be 32 MiB
  cpu_empty_cache();
  const size_t before = cpu_allocator_stats().allocated_bytes;
  int64_t total = x.sum().item<int64_t>();
  CpuAllocatorStats s = cpu_allocator_stats();
  CHECK(total == (1 << 22));
  CHECK(s.allocated_bytes + s.cached_bytes - before < (size_t{1} << 20));  // the cache keeps the high-water blocks
}
