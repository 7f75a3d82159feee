// GEMM on CUDA: the one function every CUDA matrix product goes through (mm, bmm, addmm,
// baddbmm, mv, dot, and through them matmul and einsum), the counterpart of core/cpu/gemm.h.
// Plain C++ declaration; defined in cuda/gemm.cpp (cuBLAS), or cuda/no_cuda.cpp without CUDA.
#pragma once

#include "ember/core/scalar.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out = beta * out + alpha * a @ b on one CUDA device, with cpu::addmm_out's contract:
/// 2-D (a: m x k, b: k x n, out: m x n) or 3-D batches, operands with any strides (batch
/// stride 0 included), out contiguous, beta == 0 does not read out (NaNs there are ignored)
/// and alpha == 0 or k == 0 leaves out = beta * out. Floating dtypes only (cuBLAS has no
/// integer GEMM; core/ops/linalg.cpp raises PyTorch's error before calling this). float16
/// and bfloat16 accumulate in float; float32 does not use TF32, as PyTorch's default.
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha);

}  // namespace ember::cuda
