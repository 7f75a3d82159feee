// Block-level folds shared by the softmax and normalization kernels (internal to cuda/,
// included by .cu files only): a fold across the lanes of a row (threadIdx.x) and one across
// the lanes of a column (threadIdx.y), both handing every lane the result. The grouping of
// the fold depends on the block shape only, so results are bitwise reproducible; `op` must be
// commutative bitwise (a + b, max, ...), as lanes meet their partners from either side.
#pragma once

#include <cuda_runtime.h>

#include <cstring>

namespace ember::cuda {

/// Warp shuffle (xor) of any trivially copyable value, one 32-bit word at a time.
template <class V>
__device__ __forceinline__ V shfl_xor_any(const V& v, int mask, int width) {
  constexpr int kWords = (sizeof(V) + 3) / 4;
  int w[kWords] = {};
  memcpy(w, &v, sizeof(V));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __shfl_xor_sync(0xffffffffu, w[k], mask, width);
  V r;
  memcpy(&r, w, sizeof(V));
  return r;
}

/// Folds v over the blockDim.x lanes of a row (a power of two). Up to a warp: a butterfly of
/// shuffles within groups of blockDim.x lanes (all 32 lanes of every warp must call it).
/// Wider: the butterfly per warp, then every lane folds the warps' values in warp order from
/// `smem` (at least blockDim.x / 32 entries); then the row must be the whole block
/// (blockDim.y == 1), as every thread passes two barriers.
template <class V, class Op>
__device__ __forceinline__ V row_allreduce(V v, Op op, V* smem) {
  const int lanes = blockDim.x;
  const int width = lanes < 32 ? lanes : 32;
  for (int d = width / 2; d > 0; d /= 2) v = op(v, shfl_xor_any(v, d, width));
  if (lanes <= 32) return v;
  const int warps = lanes / 32;
  if (threadIdx.x % 32 == 0) smem[threadIdx.x / 32] = v;
  __syncthreads();
  V r = smem[0];
  for (int w = 1; w < warps; ++w) r = op(r, smem[w]);
  __syncthreads();  // smem is free again for the next fold
  return r;
}

/// Folds v over the blockDim.y lanes of each column x (a power of two) through `smem`
/// (blockDim.x * blockDim.y entries): a tree, then every lane reads its column's result.
/// Every thread of the block must call it.
template <class V, class Op>
__device__ __forceinline__ V column_allreduce(V v, Op op, V* smem) {
  const int bx = blockDim.x, tx = threadIdx.x, ty = threadIdx.y;
  const int idx = ty * bx + tx;
  smem[idx] = v;
  __syncthreads();
  for (int h = blockDim.y / 2; h > 0; h /= 2) {
    if (ty < h) smem[idx] = op(smem[idx], smem[idx + h * bx]);
    __syncthreads();
  }
  V r = smem[tx];
  __syncthreads();  // smem is free again for the next fold
  return r;
}

}  // namespace ember::cuda
