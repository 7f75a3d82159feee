// How the CUDA reductions and scans lay their work out over threads and blocks: plain C++
// (no CUDA header), so the planning is unit-tested on the CPU
// (tests/core/test_cuda_reduce_plan.cpp); the kernels in cuda/reduce*.cu and cuda/scan.cu
// follow the plans and share IndexMap's arithmetic with the tests.
//
// A reduction over a dim mask is two index maps: the kept dims take an output's index (its
// row-major position among the outputs) to the offset of its first input element, and the
// reduced dims take a reduced element's row-major position (what argmax reports) to its
// offset from there. Each block of kReduceThreads threads reduces a few outputs: either a
// row of `block_x` lanes per output (the reduced elements are read along x, dense when the
// innermost reduced dim is), or a column of `block_y` lanes per output with neighbouring
// outputs along x (when the kept dims are the dense ones: sums over dim 0). When there are
// too few outputs to fill the GPU and each has many elements, the reduced range is cut into
// `splits` chunks (grid y); each writes a partial result and a second pass (plan_partials)
// folds the partials of each output in chunk order. Every fold happens in an order fixed by
// the shapes alone, so results are bitwise reproducible (no atomics).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ember/core/array_ref.h"
#include "ember/core/error.h"
#include "ember/core/host_device.h"

namespace ember::cuda {

constexpr int kReduceMaxDims = 25;     // after merging; as gpu_map's kMaxDims
constexpr int kReduceThreads = 256;    // threads per block, always all of them (full warps)
constexpr int kReduceIlp = 4;          // independent accumulators per thread (loads in flight)
constexpr int64_t kSplitMinWork = 32;  // reduced elements per thread below which no split pays
constexpr int kBlocksPerSm = 8;        // resident 256-thread blocks per SM on sm_90 (2048 threads)

/// A linear index -> element offset map over dims given innermost first.
struct IndexMap {
  int ndim = 0;
  int64_t sizes[kReduceMaxDims] = {};
  int64_t strides[kReduceMaxDims] = {};

  /// The offset of row-major position i. The outermost dim needs no division (i is below its
  /// size), so the common one-dim case is a single multiply.
  EMBER_HOST_DEVICE int64_t offset(int64_t i) const {
    if (ndim == 0) return 0;
    int64_t off = 0;
    for (int d = 0; d < ndim - 1; ++d) {
      int64_t q = i / sizes[d];
      off += (i - q * sizes[d]) * strides[d];
      i = q;
    }
    return off + i * strides[ndim - 1];
  }
};

struct ReducePlan {
  IndexMap kept;     // output index -> offset of its first element
  IndexMap reduced;  // reduced index -> offset from there
  int64_t n_out = 1, n_red = 1;
  /// true: outputs along x, each folded by a column of block_y lanes; false: each output by a
  /// row of block_x lanes, block_y outputs per block.
  bool outputs_along_x = false;
  int block_x = kReduceThreads, block_y = 1;  // powers of two, product kReduceThreads
  int64_t grid_x = 1;                         // blocks of outputs
  int64_t splits = 1;                         // grid y: chunks of the reduced range
  int64_t chunk = 0;                          // reduced elements per split

  int lanes() const { return outputs_along_x ? block_y : block_x; }
  int outputs_per_block() const { return outputs_along_x ? block_x : block_y; }
};

namespace plan_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The smallest power of two >= n (1 for n <= 1), at most `cap` (a power of two).
inline int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < cap && p < n) p *= 2;
  return p;
}

/// Appends dim (size, stride), listed outermost first, to `m` (held outermost first while
/// building), merging it into the previous dim when memory steps evenly across both; size-1
/// dims are dropped (they change no offset).
inline void push_dim(IndexMap& m, int64_t size, int64_t stride) {
  if (size == 1) return;
  if (m.ndim > 0 && m.strides[m.ndim - 1] == stride * size) {
    m.sizes[m.ndim - 1] *= size;
    m.strides[m.ndim - 1] = stride;
    return;
  }
  EMBER_CHECK(m.ndim < kReduceMaxDims, "CUDA reductions support tensors of at most ", kReduceMaxDims,
              " dimensions (after merging contiguous ones)");
  m.sizes[m.ndim] = size;
  m.strides[m.ndim] = stride;
  ++m.ndim;
}

inline void make_innermost_first(IndexMap& m) {
  std::reverse(m.sizes, m.sizes + m.ndim);
  std::reverse(m.strides, m.strides + m.ndim);
}

}  // namespace plan_detail

/// The plan of a reduction of a tensor (sizes, strides in elements) over the dims in `mask`
/// on a GPU with `sm_count` multiprocessors (0: never split the reduced range).
inline ReducePlan plan_reduce(IntArrayRef sizes, IntArrayRef strides, uint64_t mask, int sm_count) {
  using namespace plan_detail;
  ReducePlan p;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if ((mask >> d) & 1) {
      p.n_red *= sizes[d];
      push_dim(p.reduced, sizes[d], strides[d]);
    } else {
      p.n_out *= sizes[d];
      push_dim(p.kept, sizes[d], strides[d]);
    }
  }
  make_innermost_first(p.kept);
  make_innermost_first(p.reduced);

  // Neighbouring outputs along x when they are neighbours in memory and the reduced elements
  // are not: a warp then reads 32 adjacent elements of one reduced row at a time.
  p.outputs_along_x =
      p.kept.ndim > 0 && p.kept.strides[0] == 1 && p.reduced.ndim > 0 && p.reduced.strides[0] != 1;
  int64_t per_lane = ceil_div(p.n_red, kReduceIlp);  // elements a lane folds with kReduceIlp accumulators
  if (p.outputs_along_x) {
    p.block_x = pow2_at_least(p.kept.sizes[0], 32);
    p.block_y = std::min(kReduceThreads / p.block_x, pow2_at_least(per_lane, kReduceThreads));
    p.block_x = kReduceThreads / p.block_y;  // the whole block works (full warps for shuffles)
  } else {
    p.block_x = pow2_at_least(per_lane, kReduceThreads);
    p.block_y = kReduceThreads / p.block_x;
  }
  p.grid_x = std::max<int64_t>(1, ceil_div(p.n_out, p.outputs_per_block()));

  // Split the reduced range when the outputs alone leave the GPU mostly idle.
  int64_t target = int64_t{kBlocksPerSm} * sm_count;
  int64_t lane_work = ceil_div(p.n_red, p.lanes());
  p.chunk = p.n_red;
  if (p.grid_x < target && lane_work >= 2 * kSplitMinWork) {
    int64_t splits = std::min({ceil_div(target, p.grid_x), lane_work / kSplitMinWork, int64_t{65535}});
    int64_t step = int64_t{p.lanes()} * kReduceIlp;  // chunks start on whole lane sweeps
    p.chunk = ceil_div(ceil_div(p.n_red, splits), step) * step;
    p.splits = ceil_div(p.n_red, p.chunk);
  }
  return p;
}

/// The second pass of a split reduction: partials stored [splits][n_out] are folded per
/// output in chunk order (never split again).
inline ReducePlan plan_partials(int64_t n_out, int64_t splits) {
  int64_t sizes[2] = {splits, n_out}, strides[2] = {n_out, 1};
  return plan_reduce(IntArrayRef(sizes, 2), IntArrayRef(strides, 2), /*mask=*/1, /*sm_count=*/0);
}

// ---- scans ---------------------------------------------------------------------------------

constexpr int64_t kScanMinChunk = 32;  // elements a thread scans at least, once lines are split

/// A scan along one dim of a dense tensor seen as [outer, n, inner]: each line is cut into
/// `chunks` runs of `chunk` elements, one thread per run. With several chunks a first pass
/// totals each run, a second turns the totals of each line into exclusive prefixes (in
/// order), and the last scans each run from its prefix; with one chunk only the last runs.
struct ScanPlan {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t chunks = 1, chunk = 1;
  EMBER_HOST_DEVICE int64_t units() const { return outer * chunks * inner; }  // threads, first and last pass
  EMBER_HOST_DEVICE int64_t lines() const { return outer * inner; }           // threads, middle pass
};

/// `sizes` of the dense tensor, scanned along `dim` (ignored for a 0-dim tensor), on a GPU
/// with `sm_count` multiprocessors. Lines are split only while the GPU would otherwise idle,
/// and into at most ~4 sqrt(n) chunks, so the middle pass's sequential walk stays short.
inline ScanPlan plan_scan(IntArrayRef sizes, int64_t dim, int sm_count) {
  using namespace plan_detail;
  ScanPlan p;
  if (sizes.empty()) return p;
  p.n = sizes[dim];
  for (int64_t d = 0; d < dim; ++d) p.outer *= sizes[d];
  for (size_t d = dim + 1; d < sizes.size(); ++d) p.inner *= sizes[d];
  p.chunk = std::max<int64_t>(p.n, 1);
  int64_t target = int64_t{kBlocksPerSm} * sm_count * kReduceThreads;  // threads that fill the GPU
  if (p.lines() == 0 || p.lines() >= target || p.n < 2 * kScanMinChunk) return p;
  int64_t chunks = std::min({ceil_div(target, p.lines()), p.n / kScanMinChunk,
                             4 * static_cast<int64_t>(std::sqrt(static_cast<double>(p.n))) + 1});
  p.chunk = ceil_div(p.n, std::max<int64_t>(chunks, 1));
  p.chunks = ceil_div(p.n, p.chunk);
  return p;
}

}  // namespace ember::cuda
