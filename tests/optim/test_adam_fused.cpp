// Adam's and AdamW's fused step (optim/adam.cpp adam_step) against the same step through the
// tensor ops (adam_step_reference): float32 and float64, odd sizes, amsgrad, L2 and decoupled
// decay, several steps, and layouts the fused pass does not take (non-contiguous parameter,
// non-contiguous gradient), which must fall back and agree too.
#include <cmath>

#include "ember/optim/adam.h"
#include "ember/optim/adamw.h"
#include "op_check.h"

using namespace ember;
using namespace ember::optim;
using ember::test::values;

namespace {

/// a and b agree to rounding: every |a - b| within `ulps` units in the last place of T at the
/// magnitude of b, of `scale` (the operands b was computed from), or of the tensor's largest
/// element, whichever is largest. Element-wise ulps alone are too tight: the two loops round
/// in different orders (the fused loop's FMAs, addcmul's value * g * g) and the -O1 sanitizer
/// build contracts differently from -O3 (seen: ~30 ulps of a small element of a state tensor
/// whose largest element is 100x larger). A wrong formula is off by orders of magnitude more.
void check_ulps(const Tensor& a, const Tensor& b, double ulps, const Tensor& scale = {}) {
  std::vector<double> va = values(a), vb = values(b);
  std::vector<double> vs = scale.defined() ? values(scale) : std::vector<double>(vb.size(), 0.0);
  REQUIRE(va.size() == vb.size());
  REQUIRE(vs.size() == vb.size());
  const double eps = a.dtype() == kFloat ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  double largest = 0;
  for (double v : vb) largest = std::max(largest, std::fabs(v));
  for (size_t i = 0; i < va.size(); ++i) {
    CAPTURE(i);
    const double mag = std::max({std::fabs(vb[i]), std::fabs(vs[i]), largest, 1e-30});
    CHECK(std::fabs(va[i] - vb[i]) <= ulps * eps * mag);
  }
}

struct Case {
  bool amsgrad;
  double decoupled, l2;
};

}  // namespace

TEST_CASE("the fused Adam step follows the tensor ops' step") {
  // The fused loop and the tensor ops compute the same float operations in the same order;
  // only the compiler's FMA contraction and addcmul's grouping of value * g * g may differ
  // (one rounding per operation at most), hence a few ulps rather than bit equality.
  for (ScalarType t : {kFloat, kDouble})
    for (int64_t n : {1, 7, 33, 1000, 70001})
      for (Case c : {Case{false, 1e-2, 0}, Case{true, 1e-2, 0}, Case{false, 0, 0.1}, Case{true, 0, 0},
                     Case{false, 0, 0}}) {
        CAPTURE(n);
        CAPTURE(c.amsgrad);
        CAPTURE(c.decoupled);
        CAPTURE(c.l2);
        manual_seed(7);
        Tensor p1 = randn({n}).to(t), p2 = p1.clone();
        AdamParamState s1, s2;
        for (int step = 0; step < 4; ++step) {
          Tensor g = randn({n}).to(t);
          if (step == 2) g = g * 1e-3;  // smaller steps: denom near eps
          // The operands' magnitudes: |p| + lr (Adam's update is about lr in size) for the new
          // parameter, and |m| + |g| for the new m.
          Tensor p_before = p2.abs() + 2e-3;
          Tensor m_operands = (s2.exp_avg().defined() ? s2.exp_avg().abs() : zeros_like(g)) + g.abs();
          optim::detail::adam_step(p1, g, s1, 2e-3, {0.9, 0.999}, 1e-8, c.amsgrad, c.decoupled, c.l2);
          optim::detail::adam_step_reference(p2, g, s2, 2e-3, {0.9, 0.999}, 1e-8, c.amsgrad, c.decoupled, c.l2);
          CHECK(s1.step() == s2.step());
          check_ulps(s1.exp_avg(), s2.exp_avg(), 8, m_operands);
          check_ulps(s1.exp_avg_sq(), s2.exp_avg_sq(), 8);
          check_ulps(p1, p2, 8, p_before);
        }
      }
}

TEST_CASE("layouts the fused Adam step does not take fall back to the tensor ops") {
  manual_seed(8);
  // A transposed parameter and a gradient with a different layout.
  Tensor base = randn({5, 3});
  Tensor p1 = base.clone().t(), p2 = base.clone().t();
  AdamParamState s1, s2;
  for (int step = 0; step < 3; ++step) {
    Tensor g = randn({5, 3}).t();
    optim::detail::adam_step(p1, g, s1, 1e-2, {0.9, 0.999}, 1e-8, true, 1e-2, 0);
    optim::detail::adam_step_reference(p2, g, s2, 1e-2, {0.9, 0.999}, 1e-8, true, 1e-2, 0);
  }
  CHECK(values(p1) == values(p2));
  Tensor q1 = randn({4, 6}), q2 = q1.clone();
  AdamParamState t1, t2;
  for (int step = 0; step < 3; ++step) {
    Tensor g = randn({6, 4}).t();  // non-contiguous gradient for a contiguous parameter
    optim::detail::adam_step(q1, g, t1, 1e-2, {0.9, 0.999}, 1e-8, false, 0, 0.1);
    optim::detail::adam_step_reference(q2, g, t2, 1e-2, {0.9, 0.999}, 1e-8, false, 0, 0.1);
  }
  CHECK(values(q1) == values(q2));
}

TEST_CASE("the fused AdamW step keeps NaN and inf propagation") {
  Tensor p1 = tensor(std::vector<double>{1.0, 2.0, 3.0, -1.0}).to(kFloat), p2 = p1.clone();
  Tensor g = tensor(std::vector<double>{NAN, INFINITY, 0.5, 0.0}).to(kFloat);
  AdamParamState s1, s2;
  optim::detail::adam_step(p1, g, s1, 1e-2, {0.9, 0.999}, 1e-8, true, 1e-2, 0);
  optim::detail::adam_step_reference(p2, g, s2, 1e-2, {0.9, 0.999}, 1e-8, true, 1e-2, 0);
  std::vector<double> a = values(p1), b = values(p2);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(std::isnan(a[i]) == std::isnan(b[i]));
    if (!std::isnan(a[i])) CHECK(a[i] == b[i]);
  }
}

TEST_CASE("AdamW's step bumps the parameter's version") {
  Tensor p = randn({10}).requires_grad_();
  p.mutable_grad() = randn({10});
  AdamW opt({p}, AdamWOptions(1e-2));
  auto v0 = p.unsafeGetTensorImpl()->storage()->version();
  opt.step();
  CHECK(p.unsafeGetTensorImpl()->storage()->version() > v0);
}
