// The indexed loops of Note [Indexed loops] on CUDA (gather-like reads and assigning writes),
// advanced indexing's offsets and the index range check. Moving an element needs only its
// size, so these kernels are instantiated per element size (1, 2, 4, 8 bytes), not per dtype.
// The accumulating write lives in cuda/scatter.cu.
#include "ember/core/tensor_iter.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/index.h"
#include "ember/cuda/indexed.cuh"

namespace ember::cuda {

namespace {

/// The indexed move over operands {a, b, idx}: gather reads b at the indexed address
/// (a[i] = *(b[i] + idx[i] * step)), scatter writes a there (*(a[i] + idx[i] * step) = b[i]).
template <bool kGather, class Word, class Index>
__global__ void indexed_move_kernel(Index n, Pointers<3> ptr, OffsetCalc<3, Index> calc, int64_t step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;  // Note [grid-stride counter width]
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index o[3];
    calc.get(static_cast<Index>(i), o);
    int64_t jump = load_index(ptr.p[2] + o[2]) * step;
    if constexpr (kGather)
      *reinterpret_cast<Word*>(ptr.p[0] + o[0]) = *reinterpret_cast<const Word*>(ptr.p[1] + o[1] + jump);
    else
      *reinterpret_cast<Word*>(ptr.p[0] + o[0] + jump) = *reinterpret_cast<const Word*>(ptr.p[1] + o[1]);
  }
}

/// Raises *flag when some element of the single operand lies outside [lo, hi).
template <class Index>
__global__ void range_check_kernel(Index n, Pointers<1> ptr, OffsetCalc<1, Index> calc, int64_t lo,
                                   int64_t hi, int* flag) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;  // Note [grid-stride counter width]
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index o[1];
    calc.get(static_cast<Index>(i), o);
    int64_t v = load_index(ptr.p[0] + o[0]);
    if (v < lo || v >= hi) *flag = 1;  // every writer writes 1: the race is harmless
  }
}

/// offset + wrap(v) * stride for an index v of a dim of `size`; raises the flag (and adds
/// nothing) when v is outside [-size, size).
struct AddOffsetFn {
  int64_t size;
  int64_t stride;
  int* flag;
  __device__ int64_t operator()(int64_t offset, int64_t v) const {
    if (v < -size || v >= size) {
      *flag = 1;
      return offset;
    }
    return offset + (v < 0 ? v + size : v) * stride;
  }
};

/// Runs indexed_move_kernel over a 3-operand iterator of elements of `elem_size` bytes.
template <bool kGather>
void indexed_move(const TensorIter& iter, int64_t elem_size, int64_t step) {
  if (iter.numel() == 0) return;
  DeviceGuard guard(iter.device());
  cudaStream_t stream = current_raw_stream();
  Pointers<3> ptr = iter_pointers<3>(iter);
  visit_word(elem_size, [&]<typename Word>() {
    with_offset_calc<3>(iter, [&]<typename Index>(Index n, const OffsetCalc<3, Index>& calc) {
      indexed_move_kernel<kGather, Word, Index><<<blocks_for(n), kThreads, 0, stream>>>(n, ptr, calc, step);
      EMBER_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

void indexed_gather(const TensorIter& iter, ScalarType dtype, int64_t step) {
  indexed_move<true>(iter, static_cast<int64_t>(element_size(dtype)), step);
}

void indexed_scatter(const TensorIter& iter, const Tensor& dst_storage_of, int64_t step, ScatterFn fn,
                     const Scalar& alpha) {
  if (iter.numel() == 0) return;
  if (fn == ScatterFn::kAdd) {
    scatter_add_sorted(iter, dst_storage_of, step, alpha);
    return;
  }
  indexed_move<false>(iter, dst_storage_of.element_size(), step);
}

bool add_index_offsets(const Tensor& offsets, const TensorList& indices, IntArrayRef sizes,
                       IntArrayRef strides) {
  if (offsets.numel() == 0 || indices.empty()) return true;
  DeviceGuard guard(offsets.device());
  DeviceFlag bad(offsets.device());
  for (size_t j = 0; j < indices.size(); ++j) {
    TensorIter iter(offsets, {offsets, indices[j]});
    gpu_map<int64_t, int64_t, int64_t>(iter, AddOffsetFn{sizes[j], strides[j], bad.ptr()});
  }
  return !bad.is_set();
}

bool any_out_of_range(const Tensor& index, int64_t lo, int64_t hi) {
  if (index.numel() == 0) return false;
  EMBER_CHECK(index.dtype() == kLong, "internal error: any_out_of_range expects an int64 index");
  DeviceGuard guard(index.device());
  DeviceFlag bad(index.device());
  TensorIter iter = TensorIter::nullary(index);
  Pointers<1> ptr = iter_pointers<1>(iter);
  cudaStream_t stream = current_raw_stream();
  with_offset_calc<1>(iter, [&]<typename Index>(Index n, const OffsetCalc<1, Index>& calc) {
    range_check_kernel<Index><<<blocks_for(n), kThreads, 0, stream>>>(n, ptr, calc, lo, hi, bad.ptr());
    EMBER_CUDA_CHECK_LAUNCH();
  });
  return bad.is_set();
}

}  // namespace ember::cuda
