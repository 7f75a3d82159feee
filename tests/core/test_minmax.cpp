// max/min/amax/amin/argmax/argmin (core/ops/minmax.cpp): values and indices against plain
// loops, first-occurrence ties, NaN propagation, gradients (to the index; shared evenly by
// ties for amax and max()), dtypes, 0-dim and empty tensors, error texts.
#include <algorithm>
#include <cmath>
#include <limits>

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

double ref_max(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double ref_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
// std::max_element/min_element return the first of equal elements, as argmax must.
double ref_argmax(const std::vector<double>& v) { return std::max_element(v.begin(), v.end()) - v.begin(); }
double ref_argmin(const std::vector<double>& v) { return std::min_element(v.begin(), v.end()) - v.begin(); }

std::vector<Tensor> inputs_234() {
  manual_seed(9);
  return {randn({2, 3, 4}, kDouble), randn({4, 3, 2}, kDouble).permute({2, 1, 0})};
}

}  // namespace

TEST_CASE("max/min over everything and amax/amin over dim lists") {
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {1}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const Tensor& x : inputs_234()) {
    check_close(x.max(), {ref_max(values(x))});
    check_close(x.min(), {ref_min(values(x))});
    for (const auto& dims : dim_sets) {
      for (bool keepdim : {false, true}) {
        check_close(x.amax(dims, keepdim), ref_reduce(x, dims, ref_max));
        check_close(x.amin(dims, keepdim), ref_reduce(x, dims, ref_min));
        CHECK(x.amax(dims, keepdim).dim() == (keepdim ? 3 : 3 - (dims.empty() ? 3 : int64_t(dims.size()))));
      }
    }
  }
}

TEST_CASE("max/min over a dim: values, first-occurrence indices, keepdim") {
  for (const Tensor& x : inputs_234()) {
    for (int64_t d : {0, 1, 2, -1}) {
      for (bool keepdim : {false, true}) {
        auto [v, i] = x.max(d, keepdim);
        check_close(v, ref_reduce(x, {d}, ref_max));
        check_close(i, ref_reduce(x, {d}, ref_argmax));
        CHECK(i.dtype() == kLong);
        CHECK(v.dim() == (keepdim ? 3 : 2));
        auto [vn, in] = x.min(d, keepdim);
        check_close(vn, ref_reduce(x, {d}, ref_min));
        check_close(in, ref_reduce(x, {d}, ref_argmin));
      }
    }
  }
  // Ties: the first one wins. python: torch.tensor([1.,3,3,2]).max(0) -> (3., 1)
  auto [v, i] = tensor({1.0, 3.0, 3.0, 2.0}).max(0);
  check_close(v, {3});
  CHECK(i.item<int64_t>() == 1);
  CHECK(std::get<1>(tensor({3.0, 1.0, 1.0, 2.0}).min(0)).item<int64_t>() == 1);
  // Integer and bool inputs keep their dtype. python: torch.tensor([[1,5],[7,2]]).max(1)
  auto [iv, ii] = tensor({{1, 5}, {7, 2}}).max(1);
  CHECK(iv.dtype() == kLong);
  check_close(iv, {5, 7});
  check_close(ii, {1, 0});
  auto [bv, bi] = tensor({true, false}).min(0);
  CHECK(bv.dtype() == kBool);
  CHECK(bv.item<bool>() == false);
  CHECK(bi.item<int64_t>() == 1);
  CHECK(tensor({1, 5, 5}, kUInt8).max().item<int64_t>() == 5);
  CHECK(tensor({true, false}).max().item<bool>() == true);
  CHECK(tensor({true, false}).amin().item<bool>() == false);
}

TEST_CASE("NaN propagates through max/min/amax/argmax") {
  // python: torch.tensor([1., nan, 3, nan]).max(0) -> (nan, 1); argmax/argmin -> 1
  Tensor x = tensor({1.0, kNan, 3.0, kNan});
  check_close(x.max(), {kNan});
  check_close(x.min(), {kNan});
  check_close(x.amax(), {kNan});
  check_close(x.amin({0}), {kNan});
  auto [v, i] = x.max(0);
  check_close(v, {kNan});
  CHECK(i.item<int64_t>() == 1);
  CHECK(std::get<1>(x.min(0)).item<int64_t>() == 1);
  CHECK(x.argmax().item<int64_t>() == 1);
  CHECK(x.argmin().item<int64_t>() == 1);
  Tensor y = tensor({{kNan, 1.0}, {2.0, 0.0}});
  check_close(y.amax({1}), {kNan, 2.0});
  check_close(y.amin({0}), {kNan, 0.0});
}

TEST_CASE("argmax/argmin: flattened, per dim, keepdim") {
  for (const Tensor& x : inputs_234()) {
    CHECK(x.argmax().item<int64_t>() == ref_argmax(values(x)));
    CHECK(x.argmin().item<int64_t>() == ref_argmin(values(x)));
    for (int64_t d : {0, 1, 2, -2}) {
      check_close(x.argmax(d), ref_reduce(x, {d}, ref_argmax));
      check_close(x.argmin(d, true), ref_reduce(x, {d}, ref_argmin));
      CHECK(x.argmin(d, true).dim() == 3);
    }
  }
  CHECK(shape(zeros({2, 3}).argmax(std::nullopt, true)) == std::vector<int64_t>{1, 1});
  CHECK(tensor({1.0, 3.0, 3.0}).argmax().item<int64_t>() == 1);
  CHECK(tensor({2, 1, 1}, kInt16).argmin().item<int64_t>() == 1);
  CHECK(tensor(5.0).argmax().item<int64_t>() == 0);
  CHECK(tensor(5.0).argmax(0).item<int64_t>() == 0);
  CHECK(shape(zeros({0, 3}).argmax(1)) == std::vector<int64_t>{0});
}

TEST_CASE("max/min/argmax errors and empty tensors") {
  Tensor e = zeros({0});
  const char* hint = " Specify the reduction dim with the 'dim' argument.";
  check_error([&] { e.max(); },
              std::string("max(): Expected reduction dim to be specified for input.numel() == 0.") + hint);
  check_error([&] { e.min(); }, "min(): Expected reduction dim to be specified for input.numel() == 0.");
  check_error([&] { e.amax(); }, "amax(): Expected reduction dim to be specified for input.numel() == 0.");
  check_error([&] { zeros({0, 3}).amin({}); }, "amin(): Expected reduction dim to be specified");
  check_error([&] { e.argmax(); },
              "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  check_error([&] { e.argmin(); },
              "argmin(): Expected reduction dim to be specified for input.numel() == 0.");
  check_error([] { zeros({2, 0}).max(1); }, "max(): Expected reduction dim 1 to have non-zero size.");
  check_error([] { zeros({2, 0}).argmax(1); }, "argmax(): Expected reduction dim 1 to have non-zero size.");
  check_error([] { zeros({0, 3}).amax({0}); }, "amax(): Expected reduction dim 0 to have non-zero size.");
  check_error(
      [] {
        zeros({2, 3}).max(2);
      },
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_error([] { zeros({2, 3}).argmax(-3); }, "Dimension out of range");
  check_error([] { zeros({2, 3}).amax({0, 0}); }, "dim 0 appears multiple times in the list of dims");
  check_error([] { tensor({true}).argmax(); }, "\"argmax\" not implemented for 'Bool'");
  // Reducing a non-empty dim of an empty tensor is fine.
  CHECK(shape(zeros({0, 3}).amax({1})) == std::vector<int64_t>{0});
  CHECK(shape(zeros({2, 0}).amax({0})) == std::vector<int64_t>{0});
  auto [v, i] = zeros({0, 3}).max(1);
  CHECK(shape(v) == std::vector<int64_t>{0});
  CHECK(shape(i) == std::vector<int64_t>{0});
  // 0-dim inputs reduce over dim 0 / -1.
  auto [sv, si] = tensor(5.0).max(-1, true);
  CHECK(sv.dim() == 0);
  CHECK(si.item<int64_t>() == 0);
  check_close(tensor(5.0).amax({0}), {5.0});
}

TEST_CASE("max/min gradients") {
  for (bool keepdim : {false, true}) {
    check_grad([&](const TensorList& in) { return std::get<0>(in[0].max(1, keepdim)); }, {rand_leaf({3, 4})});
    check_grad([&](const TensorList& in) { return std::get<0>(in[0].t().min(0, keepdim)); },
               {rand_leaf({3, 4})});
    check_grad([&](const TensorList& in) { return in[0].amax({0, 2}, keepdim); }, {rand_leaf({2, 3, 4})});
    check_grad([&](const TensorList& in) { return in[0].amin({1}, keepdim); }, {rand_leaf({2, 3, 4})});
  }
  check_grad([](const TensorList& in) { return in[0].max(); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return in[0].t().min(); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return std::get<0>(in[0].max(0)); }, {rand_leaf({})});
  check_gradgrad([](const TensorList& in) { return std::get<0>(in[0].max(1)); }, {rand_leaf({3, 4})});
  check_gradgrad([](const TensorList& in) { return in[0].amax({1}); }, {rand_leaf({3, 4})});
}

TEST_CASE("ties share the gradient of max() and amax; max(dim) gives it to the index") {
  // python: x = [1., 3, 3, 2]; x.max().backward() -> [0, .5, .5, 0]; x.max(0)[0] -> [0, 1, 0, 0]
  Tensor x = tensor({1.0, 3.0, 3.0, 2.0}, kDouble).requires_grad_();
  x.max().backward();
  check_close(x.grad(), {0, 0.5, 0.5, 0});
  x.mutable_grad().reset();
  x.amax().backward();
  check_close(x.grad(), {0, 0.5, 0.5, 0});
  x.mutable_grad().reset();
  std::get<0>(x.max(0)).backward();
  check_close(x.grad(), {0, 1, 0, 0});
  // amin over dim 1 of [[2, 2, 2], [1, 5, 0]] = [2, 0]: row 0 ties three ways (1/3 of its
  // gradient 1 each), row 1's min is the last element (all of its gradient 3).
  Tensor y = from_values({2, 2, 2, 1, 5, 0}, {2, 3}).requires_grad_();
  (y.amin({1}) * tensor({1.0, 3.0}, kDouble)).sum().backward();
  check_close(y.grad(), {1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0, 3});
  // max() with NaNs: the NaNs share the gradient (PyTorch's evenly_distribute_backward).
  Tensor n = tensor({1.0, kNan, 3.0, kNan}, kDouble).requires_grad_();
  n.max().backward();
  check_close(n.grad(), {0, 0.5, 0, 0.5});
}

TEST_CASE("test_minmax: float32 max/min over dense rows (SIMD path) match the generic path") {
  // The float64 copy takes the generic fold; the float32 one the SIMD two-pass search.
  for (int64_t cols : {32, 33, 100, 1001}) {
    INFO("cols = " << cols);
    Tensor x = randn({7, cols});
    float* p = x.data_ptr<float>();
    // Ties (first one wins), NaN (first NaN wins), signed zeros, infinities, at odd places.
    p[0 * cols + 3] = 5.0f;
    p[0 * cols + cols - 1] = 5.0f;
    p[1 * cols + 5] = std::numeric_limits<float>::quiet_NaN();
    p[1 * cols + cols - 2] = std::numeric_limits<float>::quiet_NaN();
    p[1 * cols + 1] = 100.0f;
    for (int64_t j = 0; j < cols; ++j) p[2 * cols + j] = (j % 3 == 0) ? -0.0f : 0.0f;
    p[3 * cols + cols - 1] = std::numeric_limits<float>::infinity();
    p[4 * cols + cols - 1] = -std::numeric_limits<float>::infinity();
    p[5 * cols + cols - 1] = std::numeric_limits<float>::quiet_NaN();
    for (bool is_max : {true, false}) {
      INFO("max: " << is_max);
      auto [v32, i32] = is_max ? x.max(1) : x.min(1);
      auto [v64, i64] = is_max ? x.to(kDouble).max(1) : x.to(kDouble).min(1);
      CHECK(equal(i32, i64));
      CHECK(ember::test::values(v32).size() == 7);
      std::vector<double> a = ember::test::values(v32), b = ember::test::values(v64);
      for (size_t k = 0; k < a.size(); ++k) {
        INFO("row " << k);
        CHECK(((std::isnan(a[k]) && std::isnan(b[k])) || (a[k] == b[k] && std::signbit(a[k]) == std::signbit(b[k]))));
      }
      CHECK(equal(is_max ? x.argmax(1) : x.argmin(1), i64));
      // A transposed copy reduces strided columns on the generic path: same answers.
      Tensor xt = x.t().contiguous().t();
      CHECK(equal(std::get<1>(is_max ? xt.max(1) : xt.min(1)), i64));
    }
  }
}
