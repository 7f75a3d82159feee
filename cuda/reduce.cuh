// The CUDA reduction machinery (internal to cuda/, included by .cu files only): one kernel
// that follows a ReducePlan (cuda/reduce_plan.h) with an "ops" functor saying what a
// reduction computes, the launch of one or two passes, and the entry points of the reduce
// .cu files, which cuda/reduce.cu's dispatcher calls.
//
// An ops functor, copied to the device by value:
//   using Acc = ...;                                  // trivially copyable accumulator
//   __device__ Acc init(int64_t o) const;             // output o's start, combine's identity
//   __device__ Acc step(Acc a, M v, int64_t r) const; // fold element v (opmath_t<T>), at
//                                                     // reduced position r
//   __device__ Acc combine(Acc a, Acc b) const;       // merge partials (any grouping)
//   __device__ void write(int64_t o, const Acc& a) const;
// Accumulation types are core's acc_t (double for every floating type, int64 for integers),
// as on the CPU, so CPU and CUDA differ only by the order of the sums.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "ember/core/ops/creation.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/reduce_plan.h"

namespace ember::cuda {

/// Multiprocessors of the current device (asked once per device).
inline int sm_count() {
  static std::array<std::atomic<int>, 64> cache{};
  int dev = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  std::atomic<int>& slot = cache[static_cast<size_t>(dev) % cache.size()];
  int n = slot.load(std::memory_order_relaxed);
  if (n == 0) {
    EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    slot.store(n, std::memory_order_relaxed);
  }
  return n;
}

/// A scratch buffer of `bytes` on the current device, from the caching allocator (so freeing
/// it while kernels of the current stream still use it is safe).
inline Tensor device_scratch(int64_t bytes, Device device) {
  return empty({std::max<int64_t>(bytes, 1)}, TensorOptions().dtype(kByte).device(device));
}

// ---- the kernel --------------------------------------------------------------------------------

/// Warp shuffle of any trivially copyable value, one 32-bit word at a time.
template <class A>
__device__ __forceinline__ A shfl_down(const A& v, int delta, int width) {
  constexpr int kWords = (sizeof(A) + 3) / 4;
  int w[kWords] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], delta, width);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

/// Folds the values of the lanes that share an output; the result is valid in lane 0.
/// Lanes along x: shuffles within each warp, then the warps of a row through shared memory,
/// in warp order. Lanes along y: a tree in shared memory. Every block runs with all
/// kReduceThreads threads (full warps), and the grouping depends on the block shape only.
template <class Ops, class Acc>
__device__ __forceinline__ Acc combine_lanes(Acc a, const Ops& ops, bool outputs_along_x, Acc* smem) {
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  if (!outputs_along_x) {
    const int width = bx < 32 ? bx : 32;
    for (int d = width / 2; d > 0; d /= 2) a = ops.combine(a, shfl_down(a, d, width));
    if (bx > 32) {
      const int warps = bx / 32;
      Acc* row = smem + ty * warps;
      if (tx % 32 == 0) row[tx / 32] = a;
      __syncthreads();
      if (tx == 0)
        for (int w = 1; w < warps; ++w) a = ops.combine(a, row[w]);
    }
    return a;
  }
  const int idx = ty * bx + tx;
  smem[idx] = a;
  __syncthreads();
  for (int h = by / 2; h > 0; h /= 2) {
    if (ty < h) {
      a = ops.combine(a, smem[idx + h * bx]);
      smem[idx] = a;
    }
    __syncthreads();
  }
  return a;
}

/// Where a reduction reads: elements of T (first pass), folded with ops.step.
template <class T>
struct ElementSource {
  const device_t<T>* data;
  template <class Ops, class Acc>
  __device__ __forceinline__ Acc fold(const Ops& ops, Acc a, int64_t off, int64_t r) const {
    return ops.step(a, load_opmath<T>(data + off), r);
  }
};

/// ... or partial results of the first pass, merged with ops.combine.
template <class Acc>
struct PartialSource {
  const Acc* data;
  template <class Ops>
  __device__ __forceinline__ Acc fold(const Ops& ops, Acc a, int64_t off, int64_t) const {
    return ops.combine(a, data[off]);
  }
};

/// One block reduces its outputs over the chunk blockIdx.y of the reduced range; writes the
/// result (partials == nullptr) or the chunk's partial, partials[blockIdx.y * n_out + o].
template <class Ops, class Source>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(ReducePlan plan, Source src, Ops ops, typename Ops::Acc* partials) {
  using Acc = typename Ops::Acc;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  const bool ox = plan.outputs_along_x;
  const int lane = ox ? threadIdx.y : threadIdx.x;
  const int lanes = ox ? blockDim.y : blockDim.x;
  const int slot = ox ? threadIdx.x : threadIdx.y;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (ox ? blockDim.x : blockDim.y) + slot;
  const bool active = o < plan.n_out;
  // Threads past the last output still take part in the block's shuffles and barriers.
  const Acc start = ops.init(active ? o : plan.n_out - 1);
  Acc acc[kReduceIlp];
#pragma unroll
  for (int j = 0; j < kReduceIlp; ++j) acc[j] = start;
  if (active) {
    const int64_t base = plan.kept.offset(o);
    const int64_t begin = static_cast<int64_t>(blockIdx.y) * plan.chunk;
    const int64_t end = begin + plan.chunk < plan.n_red ? begin + plan.chunk : plan.n_red;
    for (int64_t r = begin + lane; r < end; r += static_cast<int64_t>(lanes) * kReduceIlp) {
#pragma unroll
      for (int j = 0; j < kReduceIlp; ++j) {
        const int64_t rj = r + static_cast<int64_t>(j) * lanes;
        if (rj < end) acc[j] = src.fold(ops, acc[j], base + plan.reduced.offset(rj), rj);
      }
    }
  }
  Acc a = acc[0];
#pragma unroll
  for (int j = 1; j < kReduceIlp; ++j) a = ops.combine(a, acc[j]);
  a = combine_lanes(a, ops, ox, reinterpret_cast<Acc*>(reduce_smem));
  if (active && lane == 0) {
    if (partials != nullptr)
      partials[static_cast<int64_t>(blockIdx.y) * plan.n_out + o] = a;
    else
      ops.write(o, a);
  }
}

template <class Ops, class Source>
void launch_plan(const ReducePlan& plan, const Source& src, const Ops& ops, typename Ops::Acc* partials) {
  dim3 grid(static_cast<unsigned>(plan.grid_x), static_cast<unsigned>(plan.splits));
  dim3 block(plan.block_x, plan.block_y);
  size_t smem = kReduceThreads * sizeof(typename Ops::Acc);
  reduce_kernel<Ops, Source><<<grid, block, smem, current_raw_stream()>>>(plan, src, ops, partials);
  EMBER_CUDA_CHECK_LAUNCH();
}

/// Reduces x (element type T, on the current device) over `mask` with `ops`: one pass, or
/// partials per chunk and a second pass over them when the plan splits the reduced range.
template <class T, class Ops>
void launch_reduce(const Tensor& x, uint64_t mask, const Ops& ops) {
  using Acc = typename Ops::Acc;
  static_assert(std::is_trivially_copyable_v<Acc>, "reduction accumulators are copied bytewise");
  EMBER_CHECK(x.dim() <= 64, "CUDA reductions support tensors of at most 64 dimensions");
  ReducePlan plan = plan_reduce(x.sizes(), x.strides(), mask, sm_count());
  if (plan.n_out == 0) return;
  EMBER_CHECK(plan.grid_x < (int64_t{1} << 31), "internal error: too many outputs for one reduction launch");
  ElementSource<T> src{static_cast<const device_t<T>*>(x.data_ptr())};
  if (plan.splits == 1) {
    launch_plan(plan, src, ops, static_cast<Acc*>(nullptr));
    return;
  }
  Tensor buf = device_scratch(plan.n_out * plan.splits * static_cast<int64_t>(sizeof(Acc)), x.device());
  Acc* partials = static_cast<Acc*>(buf.data_ptr());
  launch_plan(plan, src, ops, partials);
  launch_plan(plan_partials(plan.n_out, plan.splits), PartialSource<Acc>{partials}, ops,
              static_cast<Acc*>(nullptr));
}

// ---- the reduce .cu files' entry points (dispatched by cuda/reduce.cu) --------------------

namespace reduce_impl {
// reduce.cu
void sum_prod(const Tensor& x, const Tensor& out, uint64_t mask, bool is_prod);
void mean(const Tensor& x, const Tensor& out, uint64_t mask);
void all_any(const Tensor& x, const Tensor& out, uint64_t mask, bool is_all);
// reduce_stats.cu
void var_std(const Tensor& x, const Tensor& out, uint64_t mask, double correction, bool take_sqrt);
void logsumexp(const Tensor& x, const Tensor& out, uint64_t mask);
void norm(const Tensor& x, const Tensor& out, uint64_t mask, double p);
// minmax.cu
void extreme(const Tensor& x, const Tensor& out, uint64_t mask, bool is_max);
void arg_extreme(const Tensor& x, const Tensor* values, const Tensor& indices, uint64_t mask, bool is_max);
}  // namespace reduce_impl

}  // namespace ember::cuda
