// The definition of cuda::unary_map (cuda/unary.h), internal to cuda/ and included by the .cu
// files that compile it for their list of functors: unary_math.cu, unary_numeric.cu and
// activation.cu, split so that each file's nvcc time stays near a minute.
#pragma once

#include "ember/core/ops/map_domain.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/unary.h"

namespace ember::cuda {

template <class Fn>
void unary_map(const Tensor& x, const Tensor& out, const Fn& fn) {
  EMBER_CHECK(x.dtype() == out.dtype(), "internal error: cuda::unary_map got ", x.dtype(), " input for ",
              out.dtype(), " output");
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_domain<Fn::kDomain>(out.dtype(), "cuda unary map", [&]<typename T>() { gpu_map<T, T>(iter, fn); });
}

}  // namespace ember::cuda

/// Compiles cuda::unary_map for each functor of a list of cuda/unary.h.
#define EMBER_CUDA_INSTANTIATE_UNARY_MAP(Fn) \
  template void ember::cuda::unary_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, const ember::Fn&);
