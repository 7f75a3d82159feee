// nn::utils: clip_grad_norm_ against hand-computed norms (2-norm, 1-norm, inf), the
// non-finite error, clip_grad_value_, and the parameters <-> vector round trip.
#include <cmath>
#include <limits>

#include "ember/nn/utils.h"
#include "op_check.h"

using namespace ember;
namespace utils = ember::nn::utils;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;

namespace {
Tensor param_with_grad(const std::vector<double>& v, const std::vector<double>& g) {
  Tensor p = from_values(v, {static_cast<int64_t>(v.size())}, kFloat).requires_grad_(true);
  p.mutable_grad() = from_values(g, {static_cast<int64_t>(g.size())}, kFloat);
  return p;
}
}  // namespace

TEST_CASE("test_utils: clip_grad_norm_ scales by max_norm / (total + 1e-6)") {
  // Gradients [3, 4] and [12]: total 2-norm sqrt(9 + 16 + 144) = 13.
  Tensor a = param_with_grad({0, 0}, {3, 4}), b = param_with_grad({0}, {12});
  double total = utils::clip_grad_norm_({a, b}, 1.0);
  CHECK(total == doctest::Approx(13));
  double c = 1.0 / (13 + 1e-6);
  check_close(a.grad(), {3 * c, 4 * c});
  check_close(b.grad(), {12 * c});
  // Already small enough: unchanged (coefficient clamped to 1).
  Tensor s = param_with_grad({0, 0}, {0.3, 0.4});
  CHECK(utils::clip_grad_norm_(s, 10.0) == doctest::Approx(0.5));
  check_close(s.grad(), {0.3, 0.4});
  // 1-norm: |1| + |-2| + |3| = 6.
  Tensor p1 = param_with_grad({0, 0, 0}, {1, -2, 3});
  CHECK(utils::clip_grad_norm_({p1}, 3.0, 1.0) == doctest::Approx(6));
  check_close(p1.grad(), {0.5, -1, 1.5}, 1e-5);
  // inf-norm: max |g| over all parameters = 5.
  Tensor i1 = param_with_grad({0, 0}, {1, -5}), i2 = param_with_grad({0}, {2});
  double inf = std::numeric_limits<double>::infinity();
  CHECK(utils::clip_grad_norm_({i1, i2}, 1.0, inf) == doctest::Approx(5));
  check_close(i1.grad(), {0.2, -1}, 1e-5);
  // Parameters without gradients are skipped; none at all gives 0.
  Tensor no_grad = from_values({1}, {1}, kFloat).requires_grad_(true);
  CHECK(utils::clip_grad_norm_({no_grad}, 1.0) == 0);
  // The parameter handle keeps the same gradient tensor (scaled in place).
  Tensor g_before = a.grad();
  utils::clip_grad_norm_({a}, 0.5);
  CHECK(a.grad().is_same(g_before));
}

TEST_CASE("test_utils: non-finite total norm") {
  Tensor p = param_with_grad({0, 0}, {std::nan(""), 1});
  check_error([&] { utils::clip_grad_norm_({p}, 1.0, 2.0, /*error_if_nonfinite=*/true); },
              "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped");
  Tensor q = param_with_grad({0}, {std::numeric_limits<double>::infinity()});
  check_error([&] { utils::clip_grad_norm_({q}, 1.0, std::numeric_limits<double>::infinity(), true); },
              "The total norm of order inf");
  // Without the flag the (nan) norm is returned.
  CHECK(std::isnan(utils::clip_grad_norm_({p}, 1.0)));
}

TEST_CASE("test_utils: clip_grad_value_ clamps each element") {
  Tensor p = param_with_grad({0, 0, 0, 0}, {-3, -0.5, 0.5, 3});
  utils::clip_grad_value_({p}, 1.0);
  check_close(p.grad(), {-1, -0.5, 0.5, 1});
  Tensor q = param_with_grad({0}, {9});
  utils::clip_grad_value_(q, 2.0);
  check_close(q.grad(), {2});
}

TEST_CASE("test_utils: parameters_to_vector and vector_to_parameters round trip") {
  Tensor w = from_values({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat).requires_grad_(true);
  Tensor b = from_values({7, 8}, {2}, kFloat).requires_grad_(true);
  Tensor vec = utils::parameters_to_vector({w, b});
  check_close(vec, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(vec.requires_grad());  // built from the parameters, as PyTorch
  Tensor fresh = from_values({8, 7, 6, 5, 4, 3, 2, 1}, {8}, kFloat);
  utils::vector_to_parameters(fresh, {w, b});
  check_close(w, {8, 7, 6, 5, 4, 3});
  check_close(b, {2, 1});
  CHECK(w.sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(w.requires_grad());
  check_close(utils::parameters_to_vector({w, b}), fresh);
  check_error([&] { utils::vector_to_parameters(from_values({1, 2}, {2}, kFloat), {w, b}); },
              "vector_to_parameters");
}
