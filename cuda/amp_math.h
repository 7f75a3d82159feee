// The arithmetic of gradient scaling shared by the CPU (optim/grad_scaler.cpp) and the CUDA
// kernels (cuda/amp.cu): PyTorch's _amp_update_scale_ rule and the per-element unscale. Plain
// C++ (host and device), so the rule the CUDA kernel runs is unit-tested on the CPU
// (tests/optim/test_grad_scaler.cpp).
#pragma once

#include <cfloat>
#include <cstdint>

#include "ember/core/host_device.h"

namespace ember::amp_math {

/// Whether v is neither infinite nor NaN (NaN fails both comparisons), without <cmath>'s
/// overloads, which differ between host and device.
EMBER_HOST_DEVICE inline bool is_finite(float v) { return v <= FLT_MAX && v >= -FLT_MAX; }
EMBER_HOST_DEVICE inline bool is_finite(double v) { return v <= DBL_MAX && v >= -DBL_MAX; }

/// One element of the unscale: v * inv_scale, or v itself when inv_scale is 1 (so a scale of
/// 1 changes no bits, NaN payloads included), in the gradient's compute type.
template <class M>
EMBER_HOST_DEVICE inline M unscale(M v, float inv_scale) {
  return inv_scale == 1.f ? v : static_cast<M>(v * inv_scale);
}

/// PyTorch's _amp_update_scale_ on one scale: with found_inf nonzero the scale is multiplied
/// by backoff_factor and the growth tracker restarts; otherwise the tracker counts the finite
/// step, and at growth_interval consecutive ones the scale is multiplied by growth_factor
/// (kept when the product overflows float32) and the tracker restarts. The products are taken
/// in double and rounded to float once, as PyTorch's kernels do.
EMBER_HOST_DEVICE inline void update_scale(float& scale, int32_t& growth_tracker, float found_inf,
                                           double growth_factor, double backoff_factor,
                                           int64_t growth_interval) {
  if (found_inf != 0.f) {
    scale = static_cast<float>(scale * backoff_factor);
    growth_tracker = 0;
    return;
  }
  const int32_t successful = growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(scale * growth_factor);
    if (is_finite(grown)) scale = grown;
    growth_tracker = 0;
  } else {
    growth_tracker = successful;
  }
}

}  // namespace ember::amp_math
