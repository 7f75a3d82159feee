// The per-element Adam/AdamW and SGD updates (core/ops/optim_math.h's adam_element and
// sgd_element with RoundedOps), the ones the CPU's fused passes and the CUDA multi-tensor
// kernels (cuda/optim.cu) both run: several steps in float and double against PyTorch's
// formulas in long double, every option (AdamW's decay, Adam's L2, amsgrad; SGD's momentum,
// dampening, Nesterov, weight decay), and edge gradients (0, -0, denormals, huge, inf, NaN).
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

namespace {

struct SgdOptions {
  double lr = 0.1, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

/// PyTorch's _single_tensor_sgd for one element, in long double: the buffer starts as the
/// (decayed) gradient on the first step.
void sgd_ref_step(long double& p, long double& buf, long double g, const SgdOptions& o, bool first) {
  if (o.weight_decay != 0) g += o.weight_decay * p;
  if (o.momentum != 0) {
    buf = first ? g : o.momentum * buf + (1 - static_cast<long double>(o.dampening)) * g;
    g = o.nesterov ? g + o.momentum * buf : buf;
  }
  p -= o.lr * g;
}

/// sgd_element with the scalars converted to M as both devices convert them.
template <class M>
void sgd_functor_step(M& p, M& buf, M g, const SgdOptions& o, bool first) {
  const SgdScalars<M> k{static_cast<M>(o.weight_decay), static_cast<M>(o.momentum), static_cast<M>(1 - o.dampening),
                        static_cast<M>(-o.lr), o.weight_decay != 0, o.nesterov};
  if (o.momentum != 0) sgd_element<true>(p, g, buf, first, k, RoundedOps{});
  else sgd_element<false>(p, g, buf, first, k, RoundedOps{});
}

/// got is want to `rel` of the run's magnitude `mag` (the largest |p|, |buf| and |lr g| so far):
/// a parameter that a step of 10 moved away and the next moved back keeps that step's rounding.
/// Values below M's denormals (lr times a denormal gradient) are within a few of them.
template <class M>
void sgd_check_near(M got, long double want, long double mag, long double rel) {
  CAPTURE(got);
  CAPTURE(static_cast<double>(want));
  const long double tiny = 4.0L * std::numeric_limits<M>::denorm_min();
  if (std::isnan(want)) CHECK(std::isnan(got));
  else if (std::isinf(want)) CHECK(got == static_cast<M>(want));
  else CHECK(std::fabs(got - want) <= std::fmax(rel * std::fmax(std::fabs(want), mag), tiny));
}

/// Steps of the functor against the reference from p0 with gradients gs.
template <class M>
void sgd_check_run(M p0, const std::vector<M>& gs, const SgdOptions& o, long double rel) {
  M p = p0, buf = std::numeric_limits<M>::quiet_NaN();  // a new buffer's contents are never read
  long double rp = p0, rbuf = 0, mag = std::fabs(static_cast<long double>(p0));
  for (size_t i = 0; i < gs.size(); ++i) {
    CAPTURE(i);
    CAPTURE(p0);
    CAPTURE(gs[0]);
    CAPTURE(o.momentum);
    CAPTURE(o.dampening);
    CAPTURE(o.weight_decay);
    CAPTURE(o.nesterov);
    sgd_functor_step(p, buf, gs[i], o, i == 0);
    sgd_ref_step(rp, rbuf, gs[i], o, i == 0);
    for (long double v : {std::fabs(rp), std::fabs(rbuf), std::fabs(o.lr * static_cast<long double>(gs[i]))})
      if (std::isfinite(v)) mag = std::fmax(mag, v);
    sgd_check_near(p, rp, mag, rel);
    if (o.momentum != 0) sgd_check_near(buf, rbuf, mag / o.lr, rel);
  }
}

template <class M>
void sgd_check_type(long double rel) {
  using L = std::numeric_limits<M>;
  const std::vector<std::vector<M>> runs = {{M(0.5), M(-0.25), M(1), M(2), M(-3)},
                                            {M(0), M(-0.0), M(0), M(1e-3), M(0)},
                                            {M(1e-20), M(-1e-20), M(1e-20), M(1e-20), M(1e-20)},
                                            {M(100), M(0.01), M(-100), M(0.01), M(5)},
                                            {L::denorm_min(), M(0), L::denorm_min(), M(1), M(0)}};
  std::vector<SgdOptions> options(7);
  options[1].weight_decay = 0.01;
  options[2].momentum = 0.9;
  options[3].momentum = 0.9, options[3].dampening = 0.3;
  options[4].momentum = 0.9, options[4].nesterov = true;
  options[5].momentum = 0.5, options[5].nesterov = true, options[5].weight_decay = 0.05;
  options[6].momentum = 0.99, options[6].dampening = 0.5, options[6].weight_decay = 1e-4;
  for (const SgdOptions& o : options)
    for (const auto& gs : runs)
      for (M p0 : {M(1), M(-0.5), M(0)}) sgd_check_run(p0, gs, o, rel);
}

}  // namespace

TEST_CASE("optim_math: sgd_element against PyTorch's formula, every option, float and double") {
  sgd_check_type<float>(1e-5L);
  sgd_check_type<double>(1e-13L);
}

TEST_CASE("optim_math: sgd_element's first step, hand-worked") {
  // p = 1, g = 0.5, weight_decay 0.1, momentum 0.9, dampening 0.5 (ignored on the first step),
  // Nesterov off: d = 0.5 + 0.1 * 1 = 0.6; buf = 0.6; p = 1 - 0.1 * 0.6 = 0.94.
  SgdOptions o;
  o.momentum = 0.9, o.dampening = 0.5, o.weight_decay = 0.1;
  double p = 1, buf = 123;  // the old contents are ignored
  sgd_functor_step(p, buf, 0.5, o, true);
  CHECK(buf == doctest::Approx(0.6).epsilon(1e-15));
  CHECK(p == doctest::Approx(0.94).epsilon(1e-15));
  // Second step, g = -1: d = -1 + 0.1 * 0.94 = -0.906; buf = 0.9 * 0.6 + 0.5 * -0.906 = 0.087;
  // p = 0.94 - 0.1 * 0.087 = 0.9313.
  sgd_functor_step(p, buf, -1.0, o, false);
  CHECK(buf == doctest::Approx(0.087).epsilon(1e-13));
  CHECK(p == doctest::Approx(0.9313).epsilon(1e-14));
  // Nesterov (dampening 0): d = g + momentum buf. p = 0, g = 1, momentum 0.5: buf = 1,
  // d = 1 + 0.5 = 1.5, p = -0.15.
  SgdOptions n;
  n.momentum = 0.5, n.nesterov = true;
  float q = 0, qb = 0;
  sgd_functor_step(q, qb, 1.0f, n, true);
  CHECK(qb == 1.0f);
  CHECK(q == doctest::Approx(-0.15).epsilon(1e-7));
}

TEST_CASE("optim_math: sgd_element's NaN and inf") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  SgdOptions m;
  m.momentum = 0.9;
  // A NaN gradient poisons the buffer for good; an infinite one makes the parameter infinite.
  sgd_check_run(1.0f, {0.5f, nan, 0.5f}, m, 1e-5L);
  sgd_check_run(1.0f, {inf, 1.0f}, SgdOptions{}, 1e-5L);
  // Without weight decay an infinite parameter stays infinite (no 0 * inf term).
  float p = inf, buf = 0;
  sgd_functor_step(p, buf, 1.0f, m, true);
  CHECK(p == inf);
}
