// Shared by the indexing kernels (cuda/index.cu, cuda/scatter.cu, cuda/nonzero.cu; internal to
// cuda/): launching a kernel over a TensorIter with 32- or 64-bit offset arithmetic, stored
// words of an element size, and the device flag a kernel raises when it sees a bad index.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ember/core/ops/creation.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda {

/// An unsigned integer of the element size: what a kernel copies when it only moves elements.
template <int kSize>
struct WordOf;
template <>
struct WordOf<1> {
  using type = uint8_t;
};
template <>
struct WordOf<2> {
  using type = uint16_t;
};
template <>
struct WordOf<4> {
  using type = uint32_t;
};
template <>
struct WordOf<8> {
  using type = uint64_t;
};

/// Calls f.template operator()<Word>() with the word type of an element size.
template <class F>
void visit_word(int64_t elem_size, F&& f) {
  switch (elem_size) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
    default:
      EMBER_CHECK(false, "internal error: no indexed kernel for elements of ", elem_size, " bytes");
  }
}

template <int N>
Pointers<N> iter_pointers(const TensorIter& iter) {
  Pointers<N> ptr;
  for (int k = 0; k < N; ++k) ptr.p[k] = iter.data(k);
  return ptr;
}

/// Calls launch.template operator()<Index>(n, calc) with the offset calculator of `iter`
/// (N operands), in 32-bit arithmetic when every offset fits (64-bit division is slow on
/// GPUs). The indexed operand's jump (index * step) is always computed in 64 bits.
template <int N, class Launch>
void with_offset_calc(const TensorIter& iter, Launch&& launch) {
  EMBER_CHECK(iter.device().is_cuda(), "internal error: a CUDA indexing kernel was called with ",
              iter.device(), " tensors");
  EMBER_CHECK(iter.ndim() <= kMaxDims, "CUDA kernels support tensors of at most ", kMaxDims,
              " dimensions (after merging contiguous ones), got ", iter.ndim());
  if (fits_in_int32(iter))
    launch.template operator()<int32_t>(static_cast<int32_t>(iter.numel()),
                                        make_offset_calc<N, int32_t>(iter));
  else
    launch.template operator()<int64_t>(iter.numel(), make_offset_calc<N, int64_t>(iter));
}

/// indexed_scatter's kAdd (cuda/scatter.cu): Note [Deterministic indexed accumulation].
void scatter_add_sorted(const TensorIter& iter, const Tensor& dst_storage_of, int64_t step,
                        const Scalar& alpha);

/// The int64 index at a byte address.
__device__ __forceinline__ int64_t load_index(const char* p) { return *reinterpret_cast<const int64_t*>(p); }

/// A flag in device memory that kernels set when they see a bad index. Reading it is the one
/// host synchronisation of a checked indexing op (PyTorch asserts inside the kernel instead,
/// which kills the CUDA context; ember raises its CPU path's error and the process goes on).
class DeviceFlag {
 public:
  explicit DeviceFlag(Device device) : buf_(empty({1}, TensorOptions().dtype(kInt).device(device))) {
    EMBER_CUDA_CHECK(cudaMemsetAsync(ptr(), 0, sizeof(int), current_raw_stream()));
  }
  int* ptr() const { return static_cast<int*>(buf_.data_ptr()); }
  /// Waits for the kernels queued so far on the current stream and says whether one set it.
  bool is_set() const {
    int host = 0;
    cudaStream_t stream = current_raw_stream();
    EMBER_CUDA_CHECK(cudaMemcpyAsync(&host, ptr(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host != 0;
  }

 private:
  Tensor buf_;
};

}  // namespace ember::cuda
