// Creation kernels for CUDA tensors, called by core/ops/creation.cpp: the index-dependent fills
// of arange and linspace (full/zeros/ones use cuda::fill, eye a fill of the diagonal view).
// Plain C++ declarations, defined in cuda/creation.cu (or cuda/no_cuda.cpp without CUDA).
#pragma once

#include <cstdint>

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out[i] = start + i * step over a contiguous 1-d CUDA tensor, computed as the CPU's arange:
/// in int64 (istart, istep) for integer dtypes, in double (start, step) for floating ones.
void arange(const Tensor& out, int64_t istart, int64_t istep, double start, double step);
/// linspace's fill of a contiguous 1-d CUDA tensor of n >= 2 elements, as the CPU's: the first
/// half counts up from start, the rest down from end, in double.
void linspace(const Tensor& out, double start, double end, double step);

}  // namespace ember::cuda
