// The accumulating indexed write on CUDA (index_put_ with accumulate, scatter_add, index_add):
// *(dst[i] + idx[i] * step) += alpha * src[i] over a TensorIter(dst, {src, idx}).
//
// Note [Deterministic indexed accumulation]
// Repeated indices make several elements add into one destination. Atomics would do it in
// whatever order the threads arrive, so float results would change from run to run and
// differ from the CPU's. Instead (as PyTorch's index_put_ with accumulate=True does):
//   1. one thread per element writes its destination (an element offset) as a key and its
//      linear position in the iterator as the value;
//   2. a stable radix sort (CUB) groups equal destinations, each group still in iterator order;
//   3. one thread per group adds the group's sources into the destination in that order,
//      rounding to the stored type after each addition as the CPU's serial loop does.
// So the result is deterministic and equal, bit for bit, to the CPU path's. The cost is the
// sort (O(n) radix passes over only the bits an offset into dst's storage can have) and a
// group of k repeats is added by one thread in k steps, as PyTorch's sort-based path does.
#include <cub/device/device_radix_sort.cuh>

#include <bit>

#include "ember/core/tensor_iter.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/index.h"
#include "ember/cuda/indexed.cuh"

namespace ember::cuda {
namespace {

/// keys[i] = the destination of element i as an element offset from dst's first element;
/// order[i] = i. Operands {dst, src, idx}; `elem` is the element size in bytes.
template <class Index>
__global__ void destination_kernel(Index n, Pointers<3> ptr, OffsetCalc<3, Index> calc, int64_t step,
                                   int64_t elem, uint64_t* keys, int64_t* order) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;  // Note [grid-stride counter width]
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index o[3];
    calc.get(static_cast<Index>(i), o);
    int64_t byte_offset = static_cast<int64_t>(o[0]) + load_index(ptr.p[2] + o[2]) * step;
    keys[i] = static_cast<uint64_t>(byte_offset / elem);
    order[i] = static_cast<int64_t>(i);
  }
}

/// old + alpha * v as the CPU computes it (static_cast<T>(M(old) + alpha * M(v)) with M the
/// opmath type), with the float roundings spelled out so nvcc cannot fuse them into an FMA
/// that the CPU build does not use.
template <class T>
struct AddScaledFn {
  using M = opmath_t<T>;
  M alpha;
  __device__ __forceinline__ M operator()(M old, M v) const {
    if constexpr (std::is_same_v<T, bool>)
      return old || (alpha && v);
    else if constexpr (std::is_same_v<M, float>)
      return __fadd_rn(old, __fmul_rn(alpha, v));
    else if constexpr (std::is_same_v<M, double>)
      return __dadd_rn(old, __dmul_rn(alpha, v));
    else
      return static_cast<M>(old + alpha * v);
  }
};

/// For each run of equal keys (sorted, n of them), adds the run's sources into its
/// destination in the run's order. The thread at a run's first key does the whole run.
template <class T, class Index>
__global__ void accumulate_runs_kernel(int64_t n, const uint64_t* keys, const int64_t* order, char* dst,
                                       const char* src, OffsetCalc<3, Index> calc, AddScaledFn<T> add) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += stride) {
    uint64_t key = keys[p];
    if (p > 0 && keys[p - 1] == key) continue;
    device_t<T>* d = reinterpret_cast<device_t<T>*>(dst) + key;
    device_t<T> acc = *d;
    for (int64_t q = p; q < n && keys[q] == key; ++q) {
      Index o[3];
      calc.get(static_cast<Index>(order[q]), o);
      opmath_t<T> sum = add(load_opmath<T>(&acc), load_opmath<T>(src + o[1]));
      acc = to_stored<T>(sum);  // round after every addition, as the CPU does
    }
    *d = acc;
  }
}

/// Bits needed for every element offset into t's storage.
int key_bits(const Tensor& t) {
  uint64_t elems = t.unsafeGetTensorImpl()->storage()->nbytes() / static_cast<uint64_t>(t.element_size());
  return std::max(1, static_cast<int>(std::bit_width(elems)));
}

Tensor device_buffer(int64_t n, ScalarType dtype, Device device) {
  return empty({n}, TensorOptions().dtype(dtype).device(device));
}

}  // namespace

void scatter_add_sorted(const TensorIter& iter, const Tensor& dst_storage_of, int64_t step,
                        const Scalar& alpha) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  Device device = iter.device();
  DeviceGuard guard(device);
  cudaStream_t stream = current_raw_stream();
  Pointers<3> ptr = iter_pointers<3>(iter);
  const int64_t elem = dst_storage_of.element_size();

  // keys/order hold the unsorted pairs in their first half and the sorted ones in the second.
  Tensor keys = device_buffer(2 * n, kLong, device), order = device_buffer(2 * n, kLong, device);
  uint64_t* keys_in = static_cast<uint64_t*>(keys.data_ptr());
  uint64_t* keys_out = keys_in + n;
  int64_t* order_in = order.data_ptr<int64_t>();
  int64_t* order_out = order_in + n;

  with_offset_calc<3>(iter, [&]<typename Index>(Index count, const OffsetCalc<3, Index>& calc) {
    destination_kernel<Index>
        <<<blocks_for(count), kThreads, 0, stream>>>(count, ptr, calc, step, elem, keys_in, order_in);
    EMBER_CUDA_CHECK_LAUNCH();
  });

  const int end_bit = key_bits(dst_storage_of);
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, order_in,
                                                   order_out, n, 0, end_bit, stream));
  Tensor temp = device_buffer(static_cast<int64_t>(std::max<size_t>(temp_bytes, 1)), kByte, device);
  EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, keys_in, keys_out, order_in,
                                                   order_out, n, 0, end_bit, stream));

  visit_dtype(dst_storage_of.dtype(), [&]<typename T>() {
    AddScaledFn<T> add{alpha.to<opmath_t<T>>()};
    with_offset_calc<3>(iter, [&]<typename Index>(Index, const OffsetCalc<3, Index>& calc) {
      accumulate_runs_kernel<T, Index>
          <<<blocks_for(n), kThreads, 0, stream>>>(n, keys_out, order_out, ptr.p[0], ptr.p[1], calc, add);
      EMBER_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace ember::cuda
