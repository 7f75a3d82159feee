// The per-element and per-output terms of the statistical reductions var/std, logsumexp and
// norm: compiled by the host compiler for the CPU loops (core/ops/reduce.cpp, core/ops/norm.cpp)
// and by nvcc for the CUDA kernels (cuda/reduce_stats.cu), so both devices fold and finish with
// one formula and differ only in the order partials meet. Accumulation is in double for every
// floating dtype, as PyTorch's CPU reductions do.
#pragma once

#include <limits>

#include "ember/core/host_device.h"
#include "ember/core/math.h"

namespace ember {

// ---- var / std ----------------------------------------------------------------------------

/// Deviations of an output's elements from a fixed (already rounded) mean: their sum and sum
/// of squares. The sum corrects for the rounding of the mean ("corrected two-pass"), which is
/// as accurate as Welford's update without a division per element.
struct Deviations {
  double mean, sum, sum_sq;
};

EMBER_HOST_DEVICE constexpr Deviations var_step(Deviations a, double v) {
  double d = v - a.mean;
  a.sum += d;
  a.sum_sq += d * d;
  return a;
}

EMBER_HOST_DEVICE constexpr Deviations var_combine(Deviations a, const Deviations& b) {
  a.sum += b.sum;
  a.sum_sq += b.sum_sq;
  return a;
}

/// var = m2 / max(0, n - correction), or its square root. n = 0 gives 0 / 0 = NaN and a
/// non-positive dof gives inf (or NaN), as PyTorch.
EMBER_HOST_DEVICE inline double var_finish(const Deviations& a, double n, double correction, bool take_sqrt) {
  double m2 = a.sum_sq - a.sum * a.sum / n;
  if (m2 < 0) m2 = 0;  // rounding; NaN stays NaN
  double dof = n - correction > 0 ? n - correction : 0.0;
  double var = m2 / dof;
  return take_sqrt ? math::sqrt(var) : var;
}

// ---- logsumexp ----------------------------------------------------------------------------

/// A logsumexp partial: the shift (the output's max) and the sum of exp(x - shift), the
/// exponentials in M (opmath_t) and their sum in double.
template <class M>
struct LseAcc {
  M shift;
  double sum;
};

/// The shift of logsumexp from the output's NaN-propagating max: 0 when it is infinite
/// (inf - inf would be NaN), so all -inf (or no elements) gives log(0) = -inf and a +inf gives
/// inf; a NaN max makes the sum NaN.
template <class M>
EMBER_HOST_DEVICE constexpr M lse_shift(M max) {
  return math::isinf(max) ? M(0) : max;
}

template <class M>
EMBER_HOST_DEVICE inline LseAcc<M> lse_step(LseAcc<M> a, M v) {
  a.sum += static_cast<double>(math::exp(static_cast<M>(v - a.shift)));
  return a;
}

template <class M>
EMBER_HOST_DEVICE constexpr LseAcc<M> lse_combine(LseAcc<M> a, const LseAcc<M>& b) {
  a.sum += b.sum;
  return a;
}

template <class M>
EMBER_HOST_DEVICE inline double lse_finish(const LseAcc<M>& a) {
  return math::log(a.sum) + static_cast<double>(a.shift);
}

// ---- norm ---------------------------------------------------------------------------------

/// PyTorch's special p-norms, each its own fold; kGeneral is (sum |x|^p)^(1/p).
enum class NormKind { kTwo, kOne, kZero, kInf, kNegInf, kGeneral };

EMBER_HOST_DEVICE constexpr NormKind norm_kind(double p) {
  if (p == 2) return NormKind::kTwo;
  if (p == 1) return NormKind::kOne;
  if (p == 0) return NormKind::kZero;
  if (math::isinf(p)) return p > 0 ? NormKind::kInf : NormKind::kNegInf;
  return NormKind::kGeneral;
}

// The kind is a run-time argument so that CUDA runs one kernel per dtype (the loop is
// memory-bound); the CPU passes a constant and the switch folds away.

EMBER_HOST_DEVICE constexpr double norm_init(NormKind k) {
  return k == NormKind::kNegInf ? std::numeric_limits<double>::infinity() : 0.0;
}

/// Merges partials; for +-inf the NaN-propagating max (min) of absolute values, a NaN on
/// either side winning.
EMBER_HOST_DEVICE constexpr double norm_combine(NormKind k, double a, double b) {
  switch (k) {
    case NormKind::kInf:
      return math::isnan(a) || b <= a ? a : b;
    case NormKind::kNegInf:
      return math::isnan(a) || b >= a ? a : b;
    default:
      return a + b;
  }
}

/// Folds element x (its compute-type value, widened to double).
EMBER_HOST_DEVICE inline double norm_step(NormKind k, double a, double x, double p) {
  double v = math::fabs(x);
  switch (k) {
    case NormKind::kTwo:
      return a + v * v;
    case NormKind::kOne:
      return a + v;
    case NormKind::kZero:
      return a + (v != 0 ? 1.0 : 0.0);
    case NormKind::kInf:
    case NormKind::kNegInf:
      return norm_combine(k, a, v);
    default:
      return a + math::pow(v, p);
  }
}

/// The norm from the folded value; an empty norm is 0 for every p, as PyTorch (not inf for
/// p = -inf or p < 0).
EMBER_HOST_DEVICE inline double norm_finish(NormKind k, double a, double p, bool empty) {
  switch (k) {
    case NormKind::kTwo:
      return math::sqrt(a);
    case NormKind::kNegInf:
      return empty ? 0.0 : a;
    case NormKind::kGeneral:
      return empty ? 0.0 : math::pow(a, 1.0 / p);
    default:
      return a;
  }
}

}  // namespace ember
