// softmax / log_softmax and their input gradients on CUDA tensors (the CUDA side of
// core/ops/softmax.cpp). Plain C++ declarations; the kernels are in cuda/softmax.cu
// (cuda/no_cuda.cpp in a build without CUDA), laid out by cuda/softmax_plan.h.
#pragma once

#include <cstdint>

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out = softmax (log: log_softmax) of x along `dim`, the CPU's formula: max-subtracted,
/// exp(x - max) / sum or x - max - log(sum), in opmath_t (float for float16 and bfloat16).
/// x and out dense, floating, of one dtype and shape; a row holding NaN or +inf, or only
/// -inf, comes out NaN as on the CPU.
void softmax(const Tensor& x, const Tensor& out, int64_t dim, bool log);

/// grad_input of softmax (y * (grad - sum(grad * y))) or log_softmax
/// (grad - exp(y) * sum(grad)) along `dim`, y = the forward's output. All dense, one dtype.
void softmax_backward(const Tensor& grad, const Tensor& output, const Tensor& grad_input, int64_t dim, bool log);

}  // namespace ember::cuda
