// Elementwise ops of three operands on CUDA (cuda/binary.h): cuda::ternary_map for lerp with a
// tensor weight, addcmul and addcdiv, and where and masked_fill, all with the functors of
// core/ops/ternary_math.h that the CPU loops run. where and masked_fill only move elements,
// so they run on unsigned integers of the element's size: 4 kernel sets for the 10 dtypes,
// every bit pattern kept.
#include <cuda_runtime.h>

#include "ember/cuda/binary.cuh"
#include "ember/cuda/binary_kernels.cuh"

EMBER_CUDA_TERNARY_MAPS(EMBER_CUDA_INSTANTIATE_TERNARY_MAP)

namespace ember::cuda {

void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {cond, a, b});
  binary_kernels::visit_by_size(out.dtype(), [&]<typename U>() { gpu_map<U, bool, U, U>(iter, WhereFn{}); });
}

void masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {self, mask, value});
  binary_kernels::visit_by_size(out.dtype(),
                                [&]<typename U>() { gpu_map<U, U, bool, U>(iter, MaskedFillFn{}); });
}

}  // namespace ember::cuda
