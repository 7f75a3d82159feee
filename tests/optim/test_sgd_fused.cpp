// SGD's fused CPU step (optim/sgd.cpp sgd_step, core/ops/optim_math.h's sgd_element, the formula
// the CUDA kernel runs) against the same step through the tensor ops (sgd_step_reference):
// float32 and float64, odd sizes, every option (momentum, dampening, Nesterov, weight decay),
// the first momentum step included, bit for bit; and the layouts and dtypes the fused pass
// does not take, which fall back to the tensor ops.
#include <cmath>
#include <cstring>
#include <limits>

#include "ember/optim/sgd_step.h"
#include "op_check.h"

using namespace ember;
using namespace ember::optim;
using ember::test::values;

namespace {

/// Whether a and b hold the same bytes (NaNs of one payload compare equal, -0 and 0 do not).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !a.sizes().equals(b.sizes())) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

/// Whether this build's add op rounds a + alpha b once, as sgd_element's FMAs do. The tensor
/// ops' `a + alpha b` is one C++ expression that the compiler contracts to an FMA when it
/// optimises fully (-O2 and up, the Release build); at -O1 (the sanitizer build) it rounds the
/// product first, and the two paths can differ by that rounding. (1 + 2^-23)(1 - 2^-23) - 1 is
/// -2^-46 fused and 0 rounded.
bool add_is_fused() {
  const int64_t n = 67;  // the vector loop and its tail
  Tensor a = full({n}, -1.0, kFloat), b = full({n}, 1.0 - 0x1p-23, kFloat);
  Tensor r = a.add(b, 1.0 + 0x1p-23);
  for (double v : values(r))
    if (v != -0x1p-46) return false;
  return true;
}

/// The fused and the reference results agree: bit for bit where the add op fuses, else within a
/// rounding of each operation (relative to the operands' magnitude `scale`).
void check_agree(const Tensor& fused, const Tensor& ref, const Tensor& scale, bool exact) {
  if (exact) {
    CHECK(same_bits(fused, ref));
    return;
  }
  const double eps = fused.dtype() == kFloat ? 0x1p-23 : 0x1p-52;
  std::vector<double> a = values(fused), b = values(ref), s = values(scale);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(a[i] - b[i]) <= 16 * eps * (std::fabs(b[i]) + s[i]));
  }
}

struct Case {
  double momentum, dampening, weight_decay;
  bool nesterov;
};

}  // namespace

TEST_CASE("the fused SGD step equals the tensor ops' step") {
  const bool exact = add_is_fused();
  CAPTURE(exact);
  const Case cases[] = {{0, 0, 0, false},       {0, 0, 1e-2, false},     {0.9, 0, 0, false},
                        {0.9, 0.3, 0, false},   {0.9, 0, 0, true},       {0.9, 0, 5e-2, true},
                        {0.5, 0.1, 0.1, false}, {0.99, 0.5, 1e-4, false}};
  for (ScalarType t : {kFloat, kDouble})
    for (int64_t n : {1, 7, 33, 1000, 70001})
      for (const Case& c : cases) {
        CAPTURE(t);
        CAPTURE(n);
        CAPTURE(c.momentum);
        CAPTURE(c.dampening);
        CAPTURE(c.weight_decay);
        CAPTURE(c.nesterov);
        const SGDOptions o = SGDOptions(0.05)
                                 .momentum(c.momentum)
                                 .dampening(c.dampening)
                                 .weight_decay(c.weight_decay)
                                 .nesterov(c.nesterov);
        manual_seed(11);
        Tensor p1 = randn({n}).to(t), p2 = p1.clone();
        SGDParamState s1, s2;
        // The operands' magnitudes summed over the steps so far, for the tolerance of a build
        // whose add does not fuse: each step's roundings carry into the next.
        Tensor scale = zeros({n}, t);
        for (int step = 0; step < 4; ++step) {  // the first step starts the momentum buffer
          CAPTURE(step);
          Tensor g = randn({n}).to(t);
          scale = scale + p2.abs() + g.abs() +
                  (s2.momentum_buffer().defined() ? s2.momentum_buffer().abs() : zeros_like(g));
          optim::detail::sgd_step(p1, g, s1, o);
          optim::detail::sgd_step_reference(p2, g, s2, o);
          check_agree(p1, p2, scale, exact);
          REQUIRE(s1.momentum_buffer().defined() == s2.momentum_buffer().defined());
          if (s2.momentum_buffer().defined())
            check_agree(s1.momentum_buffer(), s2.momentum_buffer(), scale, exact);
        }
      }
}

TEST_CASE("the fused SGD step keeps NaN and inf as the tensor ops do") {
  // No weight decay: an inf parameter must not turn its gradient into inf * 0 = NaN.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (double wd : {0.0, 0.1}) {
    CAPTURE(wd);
    const SGDOptions o = SGDOptions(0.1).momentum(0.9).weight_decay(wd);
    Tensor p1 = tensor(std::vector<float>{inf, 1.0f, -2.0f, nan, 0.0f}), p2 = p1.clone();
    Tensor g = tensor(std::vector<float>{0.5f, nan, inf, 1.0f, -0.0f});
    SGDParamState s1, s2;
    for (int step = 0; step < 2; ++step) {
      optim::detail::sgd_step(p1, g, s1, o);
      optim::detail::sgd_step_reference(p2, g, s2, o);
    }
    std::vector<double> a = values(p1), b = values(p2);
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      CHECK(std::isnan(a[i]) == std::isnan(b[i]));
      if (!std::isnan(a[i])) CHECK(a[i] == b[i]);
    }
  }
}

TEST_CASE("tensors the fused SGD step does not take fall back to the tensor ops") {
  const SGDOptions o = SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(1e-2);
  manual_seed(12);
  // A transposed parameter, a non-contiguous gradient, a float16 parameter.
  Tensor base = randn({5, 3});
  Tensor p1 = base.clone().t(), p2 = base.clone().t();
  Tensor q1 = randn({4, 6}), q2 = q1.clone();
  Tensor h1 = randn({9}).to(kHalf), h2 = h1.clone();
  SGDParamState s1, s2, t1, t2, u1, u2;
  for (int step = 0; step < 3; ++step) {
    Tensor g = randn({5, 3}).t();
    optim::detail::sgd_step(p1, g, s1, o);
    optim::detail::sgd_step_reference(p2, g, s2, o);
    Tensor gq = randn({6, 4}).t();
    optim::detail::sgd_step(q1, gq, t1, o);
    optim::detail::sgd_step_reference(q2, gq, t2, o);
    Tensor gh = randn({9}).to(kHalf);
    optim::detail::sgd_step(h1, gh, u1, o);
    optim::detail::sgd_step_reference(h2, gh, u2, o);
  }
  CHECK(same_bits(p1, p2));
  CHECK(same_bits(s1.momentum_buffer(), s2.momentum_buffer()));
  CHECK(same_bits(q1, q2));
  CHECK(same_bits(t1.momentum_buffer(), t2.momentum_buffer()));
  CHECK(same_bits(h1, h2));
  CHECK(same_bits(u1.momentum_buffer(), u2.momentum_buffer()));
  // A gradient that is the parameter itself.
  Tensor r1 = randn({8}), r2 = r1.clone();
  SGDParamState v1, v2;
  optim::detail::sgd_step(r1, r1, v1, o);
  optim::detail::sgd_step_reference(r2, r2, v2, o);
  CHECK(same_bits(r1, r2));
}

TEST_CASE("SGD's fused step bumps the versions of the parameter and its buffer") {
  Tensor p = randn({10}).requires_grad_();
  p.mutable_grad() = randn({10});
  SGD opt({p}, SGDOptions(1e-2).momentum(0.9));
  auto v0 = p.unsafeGetTensorImpl()->storage()->version();
  opt.step();
  CHECK(p.unsafeGetTensorImpl()->storage()->version() > v0);
  Tensor buf = static_cast<SGDParamState&>(*opt.state().begin()->second).momentum_buffer();
  REQUIRE(buf.defined());
  CHECK(!buf.requires_grad());
  auto b0 = buf.unsafeGetTensorImpl()->storage()->version();
  opt.step();
  CHECK(buf.unsafeGetTensorImpl()->storage()->version() > b0);
}
