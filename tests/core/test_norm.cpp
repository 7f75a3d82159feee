// norm (core/ops/norm.cpp): p = 2, 1, inf, -inf, 0 and other p, over everything or dims,
// against plain loops; gradients as PyTorch's norm_backward, including at zero; dtypes,
// empty and 0-dim tensors, error texts.
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
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The p-norm of v by its definition (with the p = 0, +-inf special cases).
double ref_norm(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  double acc = p == -kInf ? kInf : 0;
  for (double e : v) {
    double a = std::fabs(e);
    if (p == 0)
      acc += a != 0;
    else if (p == kInf)
      acc = std::max(acc, a);
    else if (p == -kInf)
      acc = std::min(acc, a);
    else
      acc += std::pow(a, p);
  }
  return (p == 0 || std::isinf(p)) ? acc : std::pow(acc, 1 / p);
}

const std::vector<double> kPs = {2, 1, kInf, -kInf, 0, 3, 1.5, 0.5, -1};

}  // namespace

TEST_CASE("norm values for every p, over everything and over dims") {
  manual_seed(13);
  Tensor a = randn({2, 3, 4}, kDouble);
  Tensor b = randn({4, 3, 2}, kDouble).permute({2, 1, 0});
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {2}, {-2}, {0, 2}};
  for (const Tensor& x : {a, b}) {
    for (double p : kPs) {
      INFO("p = " << p);
      check_close(x.norm(p), {ref_norm(values(x), p)}, 1e-12);
      for (const auto& dims : dim_sets)
        for (bool keepdim : {false, true})
          check_close(x.norm(p, dims, keepdim), ref_reduce(x, dims, [p](auto& v) { return ref_norm(v, p); }),
                      1e-12);
    }
  }
  // |3, -4| = 5; |.|_1 = 7; |.|_inf = 4; |.|_-inf = 3; one nonzero of [0, 2]: 1.
  check_close(tensor({3.0, -4.0}).norm(), {5});
  check_close(tensor({3.0, -4.0}).norm(1), {7});
  check_close(tensor({3.0, -4.0}).norm(kInf), {4});
  check_close(tensor({3.0, -4.0}).norm(-kInf), {3});
  check_close(tensor({0.0, 2.0}).norm(0), {1});
  check_close(tensor({3.0, -4.0}).norm(std::nullopt, {0}), {5});  // p = None means 2
  CHECK(shape(ones({2, 3}).norm(2, {1}, true)) == std::vector<int64_t>{2, 1});
}

TEST_CASE("norm dtypes, NaN, empty and 0-dim") {
  Tensor h = tensor({1.0f, 2.0f}, kHalf);
  CHECK(h.norm().dtype() == kHalf);
  check_close(h.norm(), {std::sqrt(5.0)}, 2e-3);
  check_close(tensor({1.0, kNan, 3.0}).norm(kInf), {kNan});
  check_close(tensor({1.0, kNan, 3.0}).norm(-kInf), {kNan});
  check_close(tensor({1.0, kNan}).norm(), {kNan});
  for (double p : kPs) check_close(zeros({0, 3}).norm(p), {0.0});  // python: torch.zeros(0,3).norm(p) -> 0
  check_close(zeros({0, 3}).norm(-kInf, {0}), {0, 0, 0});
  CHECK(shape(zeros({0, 3}).norm(2, {1})) == std::vector<int64_t>{0});
  check_close(tensor(-5.0).norm(), {5});
  check_close(tensor(-5.0).norm(1, {0}), {5});
  check_error(
      [] {
        tensor({1, 2}).norm();
      },
      "norm(): input dtype should be either floating point or complex. Got Long instead.");
  check_error([] { zeros({2}).norm(2, {1}); }, "Dimension out of range");
}

TEST_CASE("norm gradients") {
  // Inputs away from 0 and without ties, where every p-norm is smooth.
  auto leaf = [] {
    Tensor x = from_values({0.7, -1.3, 0.4, 1.9, -0.6, 1.1, -1.6, 0.9, 1.45, -0.35, 0.55, -1.05}, {3, 4});
    return x.requires_grad_();
  };
  for (double p : {2.0, 1.0, kInf, -kInf, 3.0, 1.5, 0.5, -1.0}) {
    INFO("p = " << p);
    check_grad([p](const TensorList& in) { return in[0].norm(p); }, {leaf()});
    for (bool keepdim : {false, true}) {
      check_grad([p, keepdim](const TensorList& in) { return in[0].norm(p, {1}, keepdim); }, {leaf()});
      check_grad([p, keepdim](const TensorList& in) { return in[0].t().norm(p, {0}, keepdim); }, {leaf()});
    }
  }
  check_gradgrad([](const TensorList& in) { return in[0].norm(); }, {leaf()});
  check_gradgrad([](const TensorList& in) { return in[0].norm(3, {1}); }, {leaf()});
  check_gradgrad([](const TensorList& in) { return in[0].norm(1.5, {0}); }, {leaf()});
}

TEST_CASE("norm gradient at zero and with ties, as PyTorch") {
  // python: z = torch.zeros(3, requires_grad=True); z.norm(p).backward() -> zeros for p in
  // {2, 1, 3, 1.5, 0.5, inf, -1}; for p = 0 z.grad stays None.
  for (double p : {2.0, 1.0, 3.0, 1.5, 0.5, kInf, -1.0}) {
    INFO("p = " << p);
    Tensor z = zeros({3}, kDouble).requires_grad_();
    z.norm(p).backward();
    check_close(z.grad(), {0, 0, 0});
  }
  Tensor z = tensor({1.0, 2.0}, kDouble).requires_grad_();
  z.norm(0).backward();
  CHECK(!z.grad().defined());
  // y = [1, 0, 2, 0]: d|y|_2 = y / |y| = [1, 0, 2, 0] / sqrt(5).
  Tensor y = tensor({1.0, 0.0, 2.0, 0.0}, kDouble).requires_grad_();
  y.norm().backward();
  check_close(y.grad(), {1 / std::sqrt(5.0), 0, 2 / std::sqrt(5.0), 0}, 1e-12);
  // inf-norm ties share the gradient, with the sign of each element: [1, -3, 3, 2] -> [0, -.5, .5, 0].
  Tensor t = tensor({1.0, -3.0, 3.0, 2.0}, kDouble).requires_grad_();
  t.norm(kInf).backward();
  check_close(t.grad(), {0, -0.5, 0.5, 0});
}
