// The per-row and per-channel terms of batch, layer and group norm: compiled by the host
// compiler for the CPU kernels (core/cpu/normalization.cpp) and by nvcc for the CUDA kernels
// (cuda/normalization.cu), so both devices finish statistics and gradient coefficients with one
// formula, in double.
#pragma once

#include "ember/core/host_device.h"
#include "ember/core/math.h"

namespace ember::cpu {

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

}  // namespace ember::cpu
