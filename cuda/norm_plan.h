// How the CUDA normalization kernels (cuda/normalization.cu) lay their work over threads and
// blocks: plain C++ (no CUDA header), so the plans and the index maps the kernels share are
// unit-tested on the CPU (tests/core/test_cuda_norm_plan.cpp).
//
// Two shapes of work:
//   rows           layer / group norm see the input as R rows of D elements (statistics,
//                  output and input gradient row by row): a warp per row for short rows
//                  (rows_per_block warps in a block), else one block per row. Blocks take
//                  row groups in a grid-stride loop.
//   channel sums   per-channel sums over a dense [N, K, S] tensor: batch norm's statistics
//                  and gradient sums (K = C), and layer / group norm's weight and bias
//                  gradients (K = affine parameters). Two stages without atomics, so results
//                  are bitwise reproducible: blocks (grid x: channel tiles, grid y: chunks of
//                  N) write partial sums [split][K], then one thread per channel adds its
//                  partials in split order. With S == 1 a block takes block_x neighbouring
//                  channels (coalesced) and block_y lanes along N; with S > 1 a block takes
//                  one channel, block_x lanes along S and block_y along N.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ember/core/host_device.h"

namespace ember::cuda {

constexpr int64_t kNormWarpMaxLen = 1024;  // rows up to this length get a warp each
constexpr int kNormRowWarps = 8;           // warps (rows) per block of the warp-per-row kernel
constexpr int kNormBlockMinThreads = 128, kNormBlockMaxThreads = 512;
constexpr int kNormPerThread = 8;          // elements per thread the block-per-row kernel aims for
constexpr int kNormSumThreads = 256;       // threads per block of the channel sums
constexpr int64_t kNormSumMinWork = 16;    // elements per thread below which splitting N stops paying
constexpr int kNormBlocksPerSm = 8;        // blocks per SM the channel sums aim to fill
constexpr int64_t kNormMaxGrid = 1 << 20;  // blocks; the row kernels loop past it

namespace norm_plan_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The smallest power of two >= n (1 for n <= 1), at most `cap`.
inline int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < cap && p < n) p *= 2;
  return p;
}

}  // namespace norm_plan_detail

// ---- rows ----------------------------------------------------------------------------------

struct RowNormPlan {
  int64_t rows = 0, len = 0;
  int block_x = 32;  // lanes per row: 32 (a warp) or the whole block
  int block_y = 1;   // rows per block
  int64_t units = 0, grid = 1;

  /// The row handled by thread row `ty` of unit (row group) u.
  EMBER_HOST_DEVICE int64_t row(int64_t u, int ty) const { return u * block_y + ty; }
};

/// The plan for `rows` rows of `len` elements (rows > 0).
inline RowNormPlan plan_row_norm(int64_t rows, int64_t len) {
  using namespace norm_plan_detail;
  RowNormPlan p;
  p.rows = rows;
  p.len = len;
  if (len <= kNormWarpMaxLen) {
    p.block_x = 32;
    p.block_y = kNormRowWarps;
  } else {
    p.block_x = std::max(kNormBlockMinThreads, pow2_at_least(ceil_div(len, kNormPerThread), kNormBlockMaxThreads));
    p.block_y = 1;
  }
  p.units = ceil_div(rows, p.block_y);
  p.grid = std::clamp<int64_t>(p.units, 1, kNormMaxGrid);
  return p;
}

// ---- channel sums --------------------------------------------------------------------------

struct ChannelSumPlan {
  int64_t N = 0, K = 0, S = 1;
  bool columns = false;  // S == 1: block_x channels per block; else one channel per block
  int block_x = 1, block_y = 1;
  int64_t tiles = 1;     // grid x: blocks along the channels
  int64_t splits = 1;    // grid y: chunks of N, each writing its own partial sums
  int64_t n_chunk = 0;   // N per chunk

  /// The channel of thread column tx in tile `tile`.
  EMBER_HOST_DEVICE int64_t channel(int64_t tile, int tx) const { return columns ? tile * block_x + tx : tile; }
  /// The first and one-past-last n of chunk `split`.
  EMBER_HOST_DEVICE int64_t n_begin(int64_t split) const { return split * n_chunk; }
  EMBER_HOST_DEVICE int64_t n_end(int64_t split) const { return (split + 1) * n_chunk < N ? (split + 1) * n_chunk : N; }
  /// The offset of element (n, k, s).
  EMBER_HOST_DEVICE int64_t offset(int64_t n, int64_t k, int64_t s) const { return (n * K + k) * S + s; }
};

/// The plan of per-channel sums over a dense [N, K, S] tensor (K > 0; N or S may be 0) on a
/// GPU with `sm_count` multiprocessors (0: never split N).
inline ChannelSumPlan plan_channel_sums(int64_t N, int64_t K, int64_t S, int sm_count) {
  using namespace norm_plan_detail;
  ChannelSumPlan p;
  p.N = N;
  p.K = K;
  p.S = S;
  p.columns = S == 1;
  if (p.columns) {
    p.block_x = pow2_at_least(K, 32);
    p.block_y = kNormSumThreads / p.block_x;
    p.tiles = ceil_div(K, p.block_x);
  } else {
    p.block_x = pow2_at_least(S, kNormSumThreads);
    p.block_y = kNormSumThreads / p.block_x;
    p.tiles = K;
  }
  // Split N while the channels alone leave the GPU mostly idle and each thread keeps at
  // least kNormSumMinWork elements.
  int64_t target = int64_t{kNormBlocksPerSm} * sm_count;
  int64_t lane_work = ceil_div(N, p.block_y) * ceil_div(S, p.block_x);  // elements per thread
  int64_t splits = 1;
  if (p.tiles < target && lane_work >= 2 * kNormSumMinWork)
    splits = std::min({ceil_div(target, p.tiles), lane_work / kNormSumMinWork, N, int64_t{65535}});
  p.n_chunk = std::max<int64_t>(1, ceil_div(N, std::max<int64_t>(splits, 1)));
  p.splits = std::max<int64_t>(1, ceil_div(N, p.n_chunk));
  return p;
}

}  // namespace ember::cuda
