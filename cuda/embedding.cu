// embedding's row gather on CUDA: one thread per output element, copying its bits (the dtype
// does not matter, only the element size).
#include <cuda_runtime.h>

#include <cstdint>

#include "ember/cuda/binary_kernels.cuh"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/embedding.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda {

namespace {

/// B: the unsigned integer of the element's size.
template <class B>
__global__ void embedding_rows_kernel(const B* weight, const int64_t* idx, B* out, int64_t n, int64_t dim) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t row = i / dim, col = i - row * dim;
    out[i] = weight[idx[row] * dim + col];
  }
}

}  // namespace

void embedding_rows(const Tensor& weight, const Tensor& idx, const Tensor& out) {
  EMBER_CHECK(weight.is_contiguous() && idx.is_contiguous() && out.is_contiguous() && idx.dtype() == kLong &&
                  weight.dtype() == out.dtype() && weight.dim() == 2,
              "internal error: the CUDA embedding takes contiguous tensors and int64 indices");
  const int64_t n = out.numel(), dim = weight.size(1);
  if (n == 0) return;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_raw_stream();
  auto launch = [&]<class B>() {
    embedding_rows_kernel<B><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const B*>(weight.data_ptr()),
                                                                     idx.data_ptr<int64_t>(),
                                                                     static_cast<B*>(out.data_ptr()), n, dim);
  };
  binary_kernels::visit_by_size(weight.dtype(), launch);  // the bits move, whatever the dtype
  EMBER_CUDA_CHECK_LAUNCH();
}

}  // namespace ember::cuda
