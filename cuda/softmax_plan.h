// How the CUDA softmax kernels (cuda/softmax.cu) lay a softmax over threads and blocks: plain
// C++ (no CUDA header), so the choice and the thread-to-element maps are unit-tested on the
// CPU (tests/core/test_cuda_softmax_plan.cpp); the kernels call the same map functions.
//
// A dense tensor is seen as [outer, n, inner] with the softmax over n. Three kernels:
//   register rows  inner == 1 and n <= kSoftmaxRegisterMaxCols: a row lives in the registers
//                  of block_x lanes, per_lane elements each, and is read once and written
//                  once; max and sum as the CPU takes them. Rows up to kSoftmaxWarpMaxCols
//                  take a warp (or a power-of-two part of one for rows of up to 16 elements;
//                  block_y rows a block), shuffles only; longer ones a whole block of
//                  kSoftmaxBlockPerLane elements a lane, folded through shared memory.
//   block rows     inner == 1, longer rows: one block of block_x threads per row; a running
//                  (max, sum of exp) pass, then the output pass (the row is read twice).
//   strided        inner > 1: block_x neighbouring columns (coalesced along inner) times
//                  block_y lanes that split the n elements of each column; running
//                  (max, sum) per lane, merged across the block_y lanes in shared memory.
// Blocks take `units` (row groups, rows, or (outer, column tile) pairs) in a grid-stride
// loop, so the grid never passes the hardware limits. Every fold happens in an order fixed
// by the shapes, so results are bitwise reproducible.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ember/core/host_device.h"

namespace ember::cuda {

constexpr int64_t kSoftmaxWarpMaxCols = 1024;      // longest row held in one warp's registers
constexpr int kSoftmaxRegisterThreads = 128;       // threads per block of the warp-row kernel
constexpr int kSoftmaxBlockPerLane = 8;            // elements a lane holds in a block-wide row
constexpr int64_t kSoftmaxRegisterMaxCols = 8192;  // longest row held in one block's registers
constexpr int kSoftmaxStridedThreads = 256;        // threads per block of the strided kernel
constexpr int kSoftmaxBlockMinThreads = 128, kSoftmaxBlockMaxThreads = 1024;
constexpr int kSoftmaxBlockPerThread = 8;       // elements per thread the block kernel aims for
constexpr int64_t kSoftmaxMaxGrid = 1 << 20;    // blocks; the kernels loop past it
static_assert(kSoftmaxRegisterMaxCols == int64_t{kSoftmaxBlockMaxThreads} * kSoftmaxBlockPerLane,
              "a block-wide register row fills at most one block");

enum class SoftmaxKernel { kRegisterRows, kBlockRows, kStrided };

struct SoftmaxPlan {
  SoftmaxKernel kernel = SoftmaxKernel::kRegisterRows;
  int64_t outer = 1, n = 1, inner = 1;
  int block_x = 1, block_y = 1;  // blockDim: register rows (lanes, rows per block: 1 when
                                 // the lanes are more than a warp),
                                 // block rows (threads, 1), strided (columns, lanes along n)
  int per_lane = 1;              // register rows: elements per lane, a power of two <= 32
                                 // (kSoftmaxBlockPerLane when block_x > 32)
  int64_t tiles = 1;             // strided: column tiles of block_x per outer slice
  int64_t units = 0;             // work items the blocks take in turn
  int64_t grid = 1;              // blocks launched

  int64_t rows() const { return outer * inner; }  // softmax lines
  int threads() const { return block_x * block_y; }

  // ---- the maps the kernels use ----
  /// Register rows: the row handled by thread row `ty` of unit u.
  EMBER_HOST_DEVICE int64_t register_row(int64_t u, int ty) const { return u * block_y + ty; }
  /// Register rows: the column of slot i of lane tx (lanes interleave, so loads coalesce).
  EMBER_HOST_DEVICE int64_t register_col(int tx, int i) const { return static_cast<int64_t>(i) * block_x + tx; }
  /// Strided: the outer slice and the column of thread column tx in unit u.
  EMBER_HOST_DEVICE int64_t strided_outer(int64_t u) const { return u / tiles; }
  EMBER_HOST_DEVICE int64_t strided_col(int64_t u, int tx) const { return (u % tiles) * block_x + tx; }
};

namespace softmax_plan_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The smallest power of two >= n (1 for n <= 1), at most `cap`.
inline int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < cap && p < n) p *= 2;
  return p;
}

}  // namespace softmax_plan_detail

/// The plan of a softmax (or its backward) over n of a dense [outer, n, inner] tensor with
/// at least one element.
inline SoftmaxPlan plan_softmax(int64_t outer, int64_t n, int64_t inner) {
  using namespace softmax_plan_detail;
  SoftmaxPlan p;
  p.outer = outer;
  p.n = n;
  p.inner = inner;
  if (inner == 1 && n <= kSoftmaxWarpMaxCols) {
    // Rows of up to 32 elements take a power-of-two group of lanes with one element each
    // (several rows share a warp); longer ones a full warp with per_lane elements each.
    p.kernel = SoftmaxKernel::kRegisterRows;
    int cols = pow2_at_least(n, static_cast<int>(kSoftmaxWarpMaxCols));
    p.block_x = std::min(cols, 32);
    p.per_lane = cols / p.block_x;
    p.block_y = kSoftmaxRegisterThreads / p.block_x;
    p.units = ceil_div(outer, p.block_y);
  } else if (inner == 1 && n <= kSoftmaxRegisterMaxCols) {
    // A block per row, kSoftmaxBlockPerLane elements a lane.
    p.kernel = SoftmaxKernel::kRegisterRows;
    p.block_x = pow2_at_least(ceil_div(n, kSoftmaxBlockPerLane), kSoftmaxBlockMaxThreads);
    p.per_lane = kSoftmaxBlockPerLane;
    p.block_y = 1;
    p.units = outer;
  } else if (inner == 1) {
    p.kernel = SoftmaxKernel::kBlockRows;
    p.block_x = std::max(kSoftmaxBlockMinThreads,
                         pow2_at_least(ceil_div(n, kSoftmaxBlockPerThread), kSoftmaxBlockMaxThreads));
    p.units = outer;
  } else {
    // Columns along x (up to a warp's worth, so a warp reads neighbouring elements), the
    // rest of the block along n, never more lanes than n has elements.
    p.kernel = SoftmaxKernel::kStrided;
    p.block_x = pow2_at_least(inner, 32);
    p.block_y = pow2_at_least(n, kSoftmaxStridedThreads / p.block_x);
    p.tiles = ceil_div(inner, p.block_x);
    p.units = outer * p.tiles;
  }
  p.grid = std::clamp<int64_t>(p.units, 1, kSoftmaxMaxGrid);
  return p;
}

}  // namespace ember::cuda
