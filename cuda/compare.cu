// Comparisons, logical ops and isclose on CUDA (cuda/binary.h): cuda::compare_map for the
// functors of core/ops/compare_math.h, and isclose with its IsCloseFn (float16/bfloat16
// rounding included): the CPU's formulas. All produce bool.
#include "ember/cuda/binary.cuh"

EMBER_CUDA_COMPARE_MAPS(EMBER_CUDA_INSTANTIATE_COMPARE_MAP)

namespace ember::cuda {

void isclose(const Tensor& a, const Tensor& b, const Tensor& out, double rtol, double atol, bool equal_nan) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b});
  visit_dtype(a.dtype(), [&]<typename T>() {
    gpu_map<bool, T, T>(iter, IsCloseFn<T>{rtol, atol, equal_nan});
  });
}

}  // namespace ember::cuda
