// The per-element Adam/AdamW update (core/ops/optim_math.h's adam_element with RoundedOps),
// the one the CPU's fused pass and the CUDA multi-tensor kernel (cuda/optim.cu) both run:
// several steps in float and double against PyTorch's formula in long double, every option
// (AdamW's decay, Adam's L2, amsgrad), and edge gradients (0, -0, denormals, huge, inf, NaN).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/ops/optim_math.h"

using namespace ember;

namespace {

struct Options {
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, decay = 0, l2 = 0;
  bool amsgrad = false;
};

/// One parameter's state, in long double (the reference) or in M (the functor).
template <class R>
struct State {
  R p, m = 0, v = 0, vmax = 0;
};

/// PyTorch's _single_tensor_adam for one element at step `step`, in long double.
void ref_step(State<long double>& s, long double g, const Options& o, int step) {
  if (o.decay != 0) s.p *= 1 - static_cast<long double>(o.lr) * o.decay;
  if (o.l2 != 0) g += o.l2 * s.p;
  s.m = o.beta1 * s.m + (1 - static_cast<long double>(o.beta1)) * g;
  s.v = o.beta2 * s.v + (1 - static_cast<long double>(o.beta2)) * g * g;
  long double bc1 = 1 - std::pow(static_cast<long double>(o.beta1), step);
  long double bc2 = 1 - std::pow(static_cast<long double>(o.beta2), step);
  long double second = s.v;
  if (o.amsgrad) {
    s.vmax = (std::isnan(s.vmax) || s.vmax > s.v) ? s.vmax : s.v;
    second = s.vmax;
  }
  s.p -= o.lr / bc1 * s.m / (std::sqrt(second) / std::sqrt(bc2) + o.eps);
}

/// The functor's step, with the scalars converted to M as both devices convert them.
template <class M>
void functor_step(State<M>& s, M g, const Options& o, int step) {
  double bc1 = 1 - std::pow(o.beta1, step), bc2 = 1 - std::pow(o.beta2, step);
  AdamScalars<M> k{static_cast<M>(1 - o.lr * o.decay), static_cast<M>(o.l2),   static_cast<M>(o.beta1),
                   static_cast<M>(1 - o.beta1),         static_cast<M>(o.beta2), static_cast<M>(1 - o.beta2),
                   static_cast<M>(std::sqrt(bc2)),      static_cast<M>(o.eps), static_cast<M>(-(o.lr / bc1))};
  RoundedOps ops;
  bool d = o.decay != 0, l = o.l2 != 0;
  if (o.amsgrad) {
    if (d) adam_element<true, false, true>(s.p, g, s.m, s.v, s.vmax, k, ops);
    else if (l) adam_element<false, true, true>(s.p, g, s.m, s.v, s.vmax, k, ops);
    else adam_element<false, false, true>(s.p, g, s.m, s.v, s.vmax, k, ops);
  } else {
    if (d) adam_element<true, false, false>(s.p, g, s.m, s.v, s.vmax, k, ops);
    else if (l) adam_element<false, true, false>(s.p, g, s.m, s.v, s.vmax, k, ops);
    else adam_element<false, false, false>(s.p, g, s.m, s.v, s.vmax, k, ops);
  }
}

/// got is want within rel, or within an absolute `tiny` for values M cannot resolve: the
/// moments of a denormal gradient underflow to 0 in M and not in long double.
template <class M>
void check_near(M got, long double want, long double rel) {
  CAPTURE(got);
  CAPTURE(static_cast<double>(want));
  const long double tiny = sizeof(M) == 4 ? 1e-25L : 1e-280L;
  if (std::isnan(want)) CHECK(std::isnan(got));
  else if (std::isinf(want)) CHECK(got == static_cast<M>(want));
  else CHECK(std::fabs(got - want) <= std::fmax(rel * std::fabs(want), tiny));
}

/// Five steps from p0 with gradients gs, the functor against the reference after each.
template <class M>
void check_run(M p0, const std::vector<M>& gs, const Options& o, long double rel) {
  State<M> s{p0};
  State<long double> r{p0};
  for (int step = 1; step <= static_cast<int>(gs.size()); ++step) {
    CAPTURE(step);
    CAPTURE(p0);
    CAPTURE(gs[0]);
    CAPTURE(o.decay);
    CAPTURE(o.l2);
    functor_step(s, gs[step - 1], o, step);
    ref_step(r, gs[step - 1], o, step);
    check_near(s.m, r.m, rel);
    check_near(s.v, r.v, rel);
    check_near(s.p, r.p, rel);
    if (o.amsgrad) check_near(s.vmax, r.vmax, rel);
  }
}

template <class M>
void check_type(long double rel) {
  using L = std::numeric_limits<M>;
  const std::vector<std::vector<M>> runs = {{M(0.5), M(-0.25), M(1), M(2), M(-3)},
                                            {M(0), M(-0.0), M(0), M(1e-3), M(0)},
                                            {M(1e-20), M(-1e-20), M(1e-20), M(1e-20), M(1e-20)},
                                            {M(100), M(0.01), M(-100), M(0.01), M(5)},
                                            {L::denorm_min(), M(0), L::denorm_min(), M(1), M(0)}};
  Options plain, adamw, adam_l2, ams;
  adamw.decay = 0.1;
  adam_l2.l2 = 0.05;
  ams.amsgrad = true;
  ams.beta2 = 0.9;
  for (const Options& o : {plain, adamw, adam_l2, ams})
    for (const auto& gs : runs)
      for (M p0 : {M(1), M(-0.5), M(0)}) check_run(p0, gs, o, rel);
}

}  // namespace

TEST_CASE("optim_math: adam_element against PyTorch's formula, every option, float and double") {
  check_type<float>(2e-5L);
  check_type<double>(1e-12L);
}

TEST_CASE("optim_math: adam_element's NaN and inf gradients") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Options ams;
  ams.amsgrad = true;
  // A NaN gradient poisons the moments and the parameter; amsgrad's max keeps the NaN after.
  check_run(1.0f, {0.5f, nan, 0.5f}, ams, 1e-5L);
  check_run(1.0, {0.5, static_cast<double>(nan), 0.5}, Options{}, 1e-12L);
  // An infinite gradient: m / denom is inf / inf.
  check_run(1.0f, {inf, 1.0f}, Options{}, 1e-5L);
  // No epsilon and no gradient yet: 0 / 0.
  Options no_eps;
  no_eps.eps = 0;
  check_run(1.0, {0.0, 1.0}, no_eps, 1e-12L);
}

TEST_CASE("optim_math: RoundedOps fuses exactly its fma") {
  // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly: a fused multiply-add keeps it, a rounded
  // product would give 0.
  const float a = 1.0f + 0x1p-23f, b = 1.0f - 0x1p-23f;
  CHECK(RoundedOps::fma(a, b, -1.0f) == -0x1p-46f);
  const double c = 1.0 + 0x1p-52, d = 1.0 - 0x1p-52;
  CHECK(RoundedOps::fma(c, d, -1.0) == -0x1p-104);
  CHECK(RoundedOps::sqrt(2.0f) == std::sqrt(2.0f));
  // torch.maximum's rule: a NaN on either side wins.
  CHECK(std::isnan(RoundedOps::maximum(std::nan(""), 1.0)));
  CHECK(std::isnan(RoundedOps::maximum(1.0, std::nan(""))));
  CHECK(RoundedOps::maximum(2.0f, 1.0f) == 2.0f);
}
