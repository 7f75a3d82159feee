// GEMM on CUDA: the one function every CUDA matrix product goes through (mm, bmm, addmm,
// baddbmm, mv, dot, and through them matmul and einsum), the counterpart of core/cpu/gemm.h,
// and addmm with a fused bias add (nn::functional::linear's shape). Plain C++ declarations;
// defined in cuda/gemm.cpp (cuBLAS and cuBLASLt), or cuda/no_cuda.cpp without CUDA.
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
/// and bfloat16 accumulate in float; float32 uses TF32 only when
/// ember::backends::cuda::matmul::allow_tf32 is set (PyTorch's default: not).
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha);

/// addmm(bias, a, b, beta, alpha) into out (m x n, contiguous) as one cuBLASLt product whose
/// epilogue adds the bias row: out = alpha * a @ b + bias, when cuda/gemm_epilogue.h's
/// bias_epilogue_applies says so (a bias of shape [n] or [1, n], beta == 1, float32, float16
/// or bfloat16; Note [The bias epilogue] there). Returns false, having written nothing, when
/// it does not apply or cuBLASLt has no kernel for the case; the caller then copies the bias
/// into out and calls gemm.
bool try_gemm_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias, const Scalar& beta,
                   const Scalar& alpha);

}  // namespace ember::cuda
