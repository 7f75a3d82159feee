// The reduction layout of the CUDA loss kernels (cuda/loss.cu): what one term of nll_loss's
// target check is, and how the deterministic two-pass sums lay their terms over threads (the
// loss terms themselves are core/ops/loss_math.h's). Plain C++ (no CUDA header), so
// tests/core/test_cuda_loss_plan.cpp checks it on the CPU against the CPU ops.
//
// A sum over `count` terms runs as `blocks` blocks of kLossThreads threads: thread t of block
// b folds terms b*kLossThreads + t, then every blocks*kLossThreads further; each block folds
// its threads' values as a fixed tree in shared memory into one partial; a second pass (one
// block) folds the partials the same way. The layout depends on `count` alone (not on the
// GPU), and nothing is added atomically, so results are reproducible bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ember/core/host_device.h"
#include "ember/core/ops/loss_math.h"  // nll_offset, nll_term: the terms both devices use

namespace ember::cuda {

constexpr int kLossThreads = 256;         // a power of two: the block fold is a halving tree
constexpr int64_t kLossMaxBlocks = 1024;  // the second pass folds at most this many partials

/// Blocks of the first pass for `count` terms: one term per thread up to the cap.
inline int64_t loss_blocks(int64_t count) {
  return std::clamp<int64_t>((count + kLossThreads - 1) / kLossThreads, 1, kLossMaxBlocks);
}

/// The "no bad target" value of NllStats::first_bad (the largest int64).
constexpr int64_t kNoBadTarget = INT64_MAX;

/// What the host needs before nll_loss may run: the summed weights of the counted targets
/// (mean's divisor) and the position of the first target outside [0, C) that is not
/// ignore_index (kNoBadTarget when none).
struct NllStats {
  double total_weight = 0;
  int64_t first_bad = kNoBadTarget;
};

/// Target k's contribution to NllStats: nothing when ignored, its position when out of
/// range, else its class weight (`weight_of(t)`, 1 without weights).
template <class WeightOf>
EMBER_HOST_DEVICE NllStats nll_stats_term(int64_t k, int64_t t, int64_t n_classes, int64_t ignore_index,
                                          const WeightOf& weight_of) {
  NllStats r;
  if (t == ignore_index) return r;
  if (t < 0 || t >= n_classes) {
    r.first_bad = k;
    return r;
  }
  r.total_weight = weight_of(t);
  return r;
}

EMBER_HOST_DEVICE inline NllStats combine_nll_stats(const NllStats& a, const NllStats& b) {
  NllStats r;
  r.total_weight = a.total_weight + b.total_weight;
  r.first_bad = a.first_bad < b.first_bad ? a.first_bad : b.first_bad;
  return r;
}

}  // namespace ember::cuda
