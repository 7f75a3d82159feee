// The CUDA runtime seen from core/: plain C++ declarations, no CUDA headers. A build with
// CUDA links cuda/runtime.cu; a CPU-only build links cuda/no_cuda.cpp, whose functions say
// "ember was built without CUDA".
#pragma once

#include "ember/core/allocator.h"
#include "ember/core/scalar.h"

namespace ember {
class Tensor;

namespace cuda {
/// Whether a CUDA device can be used (torch::cuda::is_available).
bool is_available();
int device_count();
/// The CUDA caching allocator of a device.
Allocator* allocator(int device);
/// dst = src, where either may be on a CUDA device (dtype cast and broadcast as cpu::copy).
void copy(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, const Scalar& value);
}  // namespace cuda
}  // namespace ember
