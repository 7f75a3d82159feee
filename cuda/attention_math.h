// The per-row arithmetic of the fused attention kernels (cuda/attention.cu): the online
// softmax's steps and the backward's recomputed probability, in float. Plain C++ (host and
// device), so tests/core/test_cuda_attention_plan.cpp runs the kernels' loops with exactly
// these steps on the CPU, rows that see no key included.
//
// A row's state after some key tiles is (m, l): the largest score so far and the sum of
// exp(score - m). A row that has seen only -inf scores (no key, or all masked) has m = -inf and
// l = 0, and every step below keeps it there without computing -inf - -inf (NaN).
#pragma once

#include <cmath>

#include "ember/core/host_device.h"

namespace ember::cuda::attn_math {

EMBER_HOST_DEVICE inline bool is_neg_inf(float v) { return v < 0.f && std::isinf(v); }

/// The row's new max after a tile whose largest score is tile_max (fmax ignores a NaN score,
/// whose exp below then makes the row NaN, as the CPU's softmax does).
EMBER_HOST_DEVICE inline float new_max(float m_old, float tile_max) { return std::fmax(m_old, tile_max); }

/// exp(s - m) of a score against the row's max; 0 while the row has no finite max.
EMBER_HOST_DEVICE inline float prob_against(float s, float m) {
  return is_neg_inf(m) ? 0.f : std::exp(s - m);
}

/// The factor that rescales the sum and output accumulated against m_old to m_new.
EMBER_HOST_DEVICE inline float rescale(float m_old, float m_new) {
  return is_neg_inf(m_new) ? 1.f : std::exp(m_old - m_new);
}

/// The output element from the accumulated o and the row's sum: 0 for a row that saw no key.
/// (l == 0 exactly then: a row with a finite max has a term exp(0) = 1 in l.)
EMBER_HOST_DEVICE inline float finish_out(float o, float l) { return l == 0.f ? 0.f : o / l; }

/// logsumexp of the row: m + log l, -inf for a row that saw no key.
EMBER_HOST_DEVICE inline float finish_lse(float m, float l) { return l == 0.f ? -INFINITY : m + std::log(l); }

/// The backward's probability of a score from the forward's logsumexp; 0 for a row that saw
/// no key (lse = -inf).
EMBER_HOST_DEVICE inline float prob_from_lse(float s, float lse) { return prob_against(s, lse); }

}  // namespace ember::cuda::attn_math
