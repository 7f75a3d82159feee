// The per-element terms of nll_loss and binary_cross_entropy: compiled by the host compiler for
// the CPU loops (core/ops/loss.cpp) and by nvcc for the CUDA kernels (cuda/loss.cu), so both
// devices compute a loss term with one formula. M is the compute type (opmath_t: float for
// float16/bfloat16). The CUDA sums' layout is cuda/loss_plan.h's.
#pragma once

#include <cstdint>

#include "ember/core/host_device.h"
#include "ember/core/math.h"

namespace ember {

/// nll_loss over an input viewed as (N, C, S) (S the product of the spatial dims, 1 without):
/// target k = n * S + s reads the input (and writes its gradient) at (n, t, s).
EMBER_HOST_DEVICE inline int64_t nll_offset(int64_t k, int64_t c, int64_t s, int64_t t) {
  return ((k / s) * c + t) * s + k % s;
}

/// nll_loss's term for target k (value t): -weight[t] * x[n, t, s], 0 when t is ignored.
/// load_x(offset) and load_w(class) read the input and the weights in M (has_weight false:
/// every weight is 1).
template <class M, class LoadX, class LoadW>
EMBER_HOST_DEVICE M nll_term(int64_t k, int64_t t, int64_t c, int64_t s, int64_t ignore_index,
                             bool has_weight, const LoadX& load_x, const LoadW& load_w) {
  if (t == ignore_index) return M(0);
  const M wk = has_weight ? load_w(t) : M(1);
  return -wk * load_x(nll_offset(k, c, s, t));
}

/// nll_loss's input gradient at target k's position: -weight[t] * g, times 1 / total_weight
/// for Mean (scale; 1 otherwise). Grouped as written, so both devices round alike.
template <class M>
EMBER_HOST_DEVICE constexpr M nll_grad(M weight, M grad, M scale) {
  return -weight * grad * scale;
}

/// binary_cross_entropy's term, PyTorch's formula with each log clamped at -100:
///   (t - 1) max(log(1 - x), -100) - t max(log x, -100)
/// A NaN log stays NaN (the clamp compares false), as std::max(log, -100) keeps it.
struct BinaryCrossEntropyFn {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M x, M t) const {
    M log_x = math::log(x), log_1mx = math::log1p(-x);
    log_x = log_x < M(-100) ? M(-100) : log_x;
    log_1mx = log_1mx < M(-100) ? M(-100) : log_1mx;
    return (t - M(1)) * log_1mx - t * log_x;
  }
};

}  // namespace ember
