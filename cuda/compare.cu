// Comparisons, logical ops and isclose on CUDA (cuda/binary.h): cuda::compare_map for the
// functors of core/ops/compare_math.h, and isclose with its IsCloseFn: the CPU's formulas.
// All produce bool.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ember/cuda/binary.cuh"

EMBER_CUDA_COMPARE_MAPS(EMBER_CUDA_INSTANTIATE_COMPARE_MAP)

namespace ember::cuda {

namespace {

/// IsCloseFn's rounding through a float16/bfloat16 dtype T in a kernel.
template <class T>
struct RoundThrough {
  __host__ __device__ float operator()(float v) const {
    if constexpr (std::is_same_v<T, Half>)
      return __half2float(__float2half_rn(v));
    else
      return __bfloat162float(__float2bfloat16_rn(v));
  }
};

template <class T>
using DeviceRound =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, RoundThrough<T>, NoRound>;

}  // namespace

void isclose(const Tensor& a, const Tensor& b, const Tensor& out, double rtol, double atol, bool equal_nan) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b});
  visit_dtype(a.dtype(), [&]<typename T>() {
    gpu_map<bool, T, T>(iter, IsCloseFn<DeviceRound<T>>{rtol, atol, equal_nan, {}});
  });
}

}  // namespace ember::cuda
