// cuda::unary_map for the maps that keep their dtype's kind (neg, abs, square, sign, rounding,
// frac, nan_to_num), and logical_not. The formulas are the CPU's: the functors of
// core/ops/unary_math.h. Integers are computed in their own type (so neg and abs wrap at the
// type's ends as on the CPU), floats in opmath_t.
#include <cuda_runtime.h>

#include "ember/cuda/unary.cuh"

EMBER_CUDA_UNARY_NUMERIC_MAPS(EMBER_CUDA_INSTANTIATE_UNARY_MAP)

namespace ember::cuda {

void logical_not(const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  EMBER_CHECK(out.dtype() == kBool || out.dtype() == x.dtype(), "internal error: cuda::logical_not got ",
              x.dtype(), " input for ", out.dtype(), " output");
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_dtype(x.dtype(), [&]<typename T>() {
    if (out.dtype() == kBool) gpu_map<bool, T>(iter, IsZeroFn{});
    else gpu_map<T, T>(iter, IsZeroFn{});
  });
}

}  // namespace ember::cuda
