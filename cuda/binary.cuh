// The definitions of the map templates of cuda/binary.h, internal to cuda/ and included by the
// .cu files that compile them for their lists of functors: binary.cu, division.cu, pow.cu,
// compare.cu and ternary.cu, split so that each file's nvcc time stays near a minute.
#pragma once

#include "ember/core/ops/map_domain.h"
#include "ember/core/tensor.h"
#include "ember/cuda/binary.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda {

template <class Fn>
void binary_map(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b});
  visit_domain<Fn::kDomain>(out.dtype(), "cuda binary map",
                            [&]<typename T>() { gpu_map<T, T, T>(iter, fn); });
}

template <class Fn>
void compare_map(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b});
  visit_domain<Fn::kDomain>(a.dtype(), "cuda compare map",
                            [&]<typename T>() { gpu_map<bool, T, T>(iter, fn); });
}

template <class Fn>
void ternary_map(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out, const Fn& fn) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b, c});
  visit_domain<Fn::kDomain>(out.dtype(), "cuda ternary map",
                            [&]<typename T>() { gpu_map<T, T, T, T>(iter, fn); });
}

}  // namespace ember::cuda

/// Compile the templates of cuda/binary.h for each functor of one of its lists.
#define EMBER_CUDA_INSTANTIATE_BINARY_MAP(Fn)                                                  \
  template void ember::cuda::binary_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, \
                                                   const ember::Tensor&, const ember::Fn&);
#define EMBER_CUDA_INSTANTIATE_COMPARE_MAP(Fn)                                                  \
  template void ember::cuda::compare_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, \
                                                    const ember::Tensor&, const ember::Fn&);
#define EMBER_CUDA_INSTANTIATE_TERNARY_MAP(Fn)                                                  \
  template void ember::cuda::ternary_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, \
                                                    const ember::Tensor&, const ember::Tensor&, \
                                                    const ember::Fn&);
