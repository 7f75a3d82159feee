// The mask of tril/triu on CUDA tensors, called by core/ops/shape.cpp (the copy into the output
// goes through cuda::copy). Plain C++ declaration, defined in cuda/tril.cu (or no_cuda.cpp).
#pragma once

#include <cstdint>

namespace ember {
class Tensor;
}

namespace ember::cuda {
/// Zeros the elements of each matrix (last two dims) of a CUDA tensor outside the kept
/// triangle: tril (lower) keeps j - i <= k, triu keeps j - i >= k. t may be strided.
void zero_outside_triangle(const Tensor& t, int64_t k, bool lower);
}  // namespace ember::cuda
