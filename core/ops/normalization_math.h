// The formulas of batch, layer and group norm: compiled by the host compiler for the CPU
// kernels (core/cpu/normalization.cpp) and by nvcc for the CUDA kernels (cuda/normalization.cu),
// so both devices finish statistics and coefficients with one formula, in double, and compute
// each output and input-gradient element with one functor, in the compute type M (opmath_t:
// float for float16/bfloat16). It sits beside the other ops' formulas (core/ops/*_math.h), not
// in core/cpu/, because the CUDA kernels are as much its users as the CPU's.
#pragma once

#include "ember/core/host_device.h"
#include "ember/core/math.h"

namespace ember {

/// A row's (channel's) mean and biased variance.
struct NormMoments {
  double mean, var;
};

/// The moments of `count` elements from their sums s1, s2 of x - K (K one of the elements, so
/// the sums do not cancel catastrophically). No elements: mean K, variance 0. Rounding may
/// make the variance negative: clamped to 0, a NaN kept (as std::max(v, 0.0) keeps it).
EMBER_HOST_DEVICE inline NormMoments shifted_moments(double K, double s1, double s2, double count) {
  const double m1 = count > 0 ? s1 / count : 0.0;
  double var = count > 0 ? s2 / count - m1 * m1 : 0.0;
  var = var < 0.0 ? 0.0 : var;
  return {K + m1, var};
}

/// 1 / sqrt(var + eps), the rstd layer and group norm save.
EMBER_HOST_DEVICE inline double norm_rstd(double var, double eps) { return 1.0 / math::sqrt(var + eps); }

// Note [Affine functors' FMAs]: each product that meets a sum does so in an explicit math::fma,
// so the rounding is the formula's, not the compiler's. Written as plain `a * b + c`, the host
// compiler contracts at -O2 and up but not at -O1, nvcc on its own terms, and for
// go k1 + x k2 + k3 GCC fused go k1 for some dtypes and x k2 for float16 (the loop's
// conversions changed which product it met first). The explicit forms are those the CPU's
// Release build computed for float32, float64 and bfloat16.

/// An output's coefficients out = x scale + shift (ScaleShiftFn) where one weight and bias cover
/// a block of elements: scale = w rstd, shift = b - mean scale (w 1 and b 0 when absent).
struct AffineCoefs {
  double scale, shift;
};
EMBER_HOST_DEVICE inline AffineCoefs affine_coefs(double w, double b, double mean, double rstd) {
  const double scale = w * rstd;
  return {scale, math::fma(-mean, scale, b)};
}

/// x scale + shift: batch norm's output and layer / group norm's output without a weight and
/// bias per element, the coefficients from affine_coefs converted to M.
struct ScaleShiftFn {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M x, M scale, M shift) const {
    return math::fma(x, scale, shift);
  }
};

/// (x - mean) rstd w + b: layer norm's output with a weight and a bias per element, mean and
/// rstd converted to M (the order of a row's loop that vectorizes: no per-element double).
struct LayerNormAffineFn {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M x, M mean, M rstd, M w, M b) const {
    return math::fma((x - mean) * rstd, w, b);
  }
};

/// go k1 + x k2 + k3: the input gradient of every normalization once a row's or channel's sums
/// give k2 and k3 (row_grad_coefs, batch_grad_coefs) besides k1 = w rs, each converted to M.
struct AffineGradFn {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M go, M x, M k1, M k2, M k3) const {
    return math::fma(go, k1, x * k2) + k3;
  }
};

/// The input gradient's coefficients gi = k1 go + k2 x + k3 besides k1 (= w rs).
struct GradCoefs {
  double k2, k3;
};

/// Layer / group norm, one row of D elements with mean m and rstd rs, A = sum(go w) and
/// B = sum(go w (x - m)): k2 = -rs^3 B / D, k3 = -rs A / D - k2 m.
EMBER_HOST_DEVICE inline GradCoefs row_grad_coefs(double rs, double m, double A, double B, double D) {
  const double k2 = -rs * rs * rs * B / D;
  return {k2, -rs * A / D - k2 * m};
}

/// Batch norm, one channel of `count` elements, k1 = w rs, sg = sum(go), sgx = sum(go (x - m)).
/// With batch statistics (go - mean(go) - xhat mean(go xhat)) expands to
/// k2 = -k1 rs^2 sgx / count and k3 = -k1 sg / count - k2 m; with running statistics (or no
/// elements) the statistics are constants and both are 0.
EMBER_HOST_DEVICE inline GradCoefs batch_grad_coefs(double k1, double rs, double m, double sg, double sgx,
                                                    double count, bool batch_stats) {
  if (!batch_stats || !(count > 0)) return {0.0, 0.0};
  const double k2 = -k1 * rs * rs * sgx / count;
  return {k2, -k1 * sg / count - k2 * m};
}

}  // namespace ember
