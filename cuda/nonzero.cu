// nonzero on CUDA. Its output's size is the number of nonzero elements, a host value, so it
// costs one host synchronisation, as PyTorch's does:
//   1. flags[i] = (x[i] != 0) in row-major order (one elementwise kernel, any layout);
//   2. CUB's DeviceSelect::Flagged keeps the linear positions i whose flag is set, in order,
//      and counts them on the device;
//   3. the count comes to the host, the (count, dim) output is allocated, and one kernel turns
//      each linear position into its multi-index.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include "ember/core/tensor_iter.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/index.h"
#include "ember/cuda/indexed.cuh"

namespace ember::cuda {
namespace {

/// x != 0, read in the type kernels compute in (NaN counts as nonzero).
struct IsNonzeroFn {
  template <class V>
  __device__ bool operator()(V v) const {
    return v != V(0);
  }
};

struct Sizes {
  int64_t s[kMaxDims];
};

/// out[r, :] = the multi-index of the linear position pos[r] in a tensor of `sizes` (nd dims).
__global__ void unravel_kernel(int64_t count, const int64_t* pos, int nd, Sizes sizes, int64_t* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += stride) {
    int64_t rest = pos[r];
    for (int d = nd - 1; d >= 0; --d) {
      int64_t q = rest / sizes.s[d];
      out[r * nd + d] = rest - q * sizes.s[d];
      rest = q;
    }
  }
}

}  // namespace

Tensor nonzero(const Tensor& self) {
  Device device = self.device();
  DeviceGuard guard(device);
  const int64_t n = self.numel(), nd = self.dim();
  TensorOptions long_options = TensorOptions().dtype(kLong).device(device);
  if (n == 0) return empty({0, nd}, long_options);
  EMBER_CHECK(nd <= kMaxDims, "nonzero is not supported for tensors with more than ", kMaxDims,
              " dimensions");
  cudaStream_t stream = current_raw_stream();

  Tensor flags = empty(self.sizes(), TensorOptions().dtype(kBool).device(device));
  TensorIter iter(flags, {self});
  visit_dtype(self.dtype(), [&]<typename T>() { gpu_map<bool, T>(iter, IsNonzeroFn{}); });

  // positions: n slots for the selected linear positions, then one for their count.
  Tensor positions = empty({n + 1}, long_options);
  int64_t* pos = positions.data_ptr<int64_t>();
  int64_t* count_on_device = pos + n;
  thrust::counting_iterator<int64_t> linear(0);
  const bool* flag_ptr = flags.data_ptr<bool>();
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(
      cub::DeviceSelect::Flagged(nullptr, temp_bytes, linear, flag_ptr, pos, count_on_device, n, stream));
  Tensor temp = empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))},
                      TensorOptions().dtype(kByte).device(device));
  EMBER_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.data_ptr(), temp_bytes, linear, flag_ptr, pos,
                                              count_on_device, n, stream));

  int64_t count = 0;
  EMBER_CUDA_CHECK(cudaMemcpyAsync(&count, count_on_device, sizeof count, cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));

  Tensor out = empty({count, nd}, long_options);
  if (count == 0 || nd == 0) return out;
  Sizes sizes{};
  for (int64_t d = 0; d < nd; ++d) sizes.s[d] = self.size(d);
  unravel_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, pos, static_cast<int>(nd), sizes,
                                                             out.data_ptr<int64_t>());
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace ember::cuda
