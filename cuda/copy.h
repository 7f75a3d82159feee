// Copies and fills that touch CUDA memory, called by core/ops/copy.cpp: between devices, between
// dtypes, with broadcasting. Kernel entry points: plain C++ declarations, defined in
// cuda/copy.cu (or cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include "ember/core/scalar.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {
/// dst = src cast to dst's dtype and broadcast to its shape, where either may be on a CUDA
/// device. Host-device copies wait for the transfer unless `non_blocking` and the host side
/// is pinned (then they are ordered on the current stream, as PyTorch's).
void copy(const Tensor& dst, const Tensor& src, bool non_blocking = false);
/// Every element of a CUDA tensor = value.
void fill(const Tensor& dst, const Scalar& value);
}  // namespace ember::cuda
