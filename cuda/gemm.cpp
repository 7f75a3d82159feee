// cuda::gemm (cuda/gemm.h): every CUDA matrix product is one cublasGemmStridedBatchedEx call
// (its _64 form, so no size needs to fit in an int), with strided and transposed operands
// passed as cuBLAS transposes rather than copied (cuda/gemm_layout.h). float32 and float64
// compute in their own type; float16 and bfloat16 are read and written in 16 bits and
// accumulate in float (CUBLAS_COMPUTE_32F), as PyTorch's.
#include "ember/cuda/gemm.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/tensor.h"
#include "ember/cuda/blas_handle.cuh"
#include "ember/cuda/cuda_check.h"
#include "ember/cuda/device.h"
#include "ember/cuda/gemm_layout.h"

namespace ember::cuda {
namespace {

/// cuBLAS's names for a dtype: how its elements are stored, what a product accumulates in,
/// and the type of alpha and beta (the accumulation type's).
struct BlasTypes {
  cudaDataType data;
  cublasComputeType_t compute;
  cudaDataType scalar;
};

BlasTypes blas_types(ScalarType t) {
  switch (t) {
    case kFloat:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case kDouble:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case kHalf:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    default:
      ::ember::detail::throw_error(
          ::ember::detail::str_cat("internal error: cuda::gemm called for ", scalar_type_name(t)));
  }
}

/// alpha or beta in the type cuBLAS reads it as (float or double, by BlasTypes::scalar).
struct BlasScalar {
  float f;
  double d;
  explicit BlasScalar(const Scalar& s) : f(s.toFloat()), d(s.toDouble()) {}
  const void* ptr(cudaDataType t) const { return t == CUDA_R_64F ? static_cast<const void*>(&d) : &f; }
};

/// One operand as cuBLAS reads it: the tensor itself when its layout fits, else a
/// contiguous copy (which the caching allocator keeps until the product has run: it is
/// freed on the stream the product is enqueued on).
struct Operand {
  Tensor t;
  BlasMatrix layout;
};

BlasMatrix layout_of(const Tensor& x) {
  const int64_t d = x.dim();
  return blas_matrix(x.size(d - 2), x.size(d - 1), x.stride(d - 2), x.stride(d - 1),
                     d == 3 ? x.stride(0) : 0);
}

Operand operand(const Tensor& x) {
  BlasMatrix layout = layout_of(x);
  if (!layout.copy) return {x, layout};
  Tensor dense = x.contiguous();
  return {dense, layout_of(dense)};
}

cublasOperation_t blas_op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

/// out = beta * out, for products with nothing to add (k == 0 or alpha == 0): BLAS's rule,
/// and with beta == 0 out is zeroed without being read.
void scale_output(cublasHandle_t handle, const Tensor& out, const Scalar& beta, const BlasTypes& types) {
  if (beta.toDouble() == 0.0) {
    EMBER_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), current_raw_stream()));
    return;
  }
  if (beta.toDouble() == 1.0) return;
  const BlasScalar b(beta);
  EMBER_CUBLAS_CHECK(cublasScalEx_64(handle, out.numel(), b.ptr(types.scalar), types.scalar, out.data_ptr(),
                                     types.data, 1, types.scalar));
}

}  // namespace

void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  EMBER_CHECK(out.is_contiguous(), "internal error: cuda::gemm's output must be contiguous");
  if (out.numel() == 0) return;
  NoGradGuard no_grad;  // copies made here belong to no graph
  DeviceGuard guard(out.device());
  const BlasTypes types = blas_types(out.dtype());
  cublasHandle_t handle = blas_handle();
  const int64_t d = out.dim(), batch = d == 3 ? out.size(0) : 1;
  const int64_t m = out.size(d - 2), n = out.size(d - 1), k = a.size(d - 1);
  if (k == 0 || alpha.toDouble() == 0.0) {
    scale_output(handle, out, beta, types);
    return;
  }
  const Operand A = operand(a), B = operand(b);
  const ColumnMajorGemm g = column_major_gemm(m, n, k, A.layout, B.layout);
  const BlasScalar al(alpha), be(beta);
  EMBER_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
      handle, blas_op(g.trans_first), blas_op(g.trans_second), g.m, g.n, g.k, al.ptr(types.scalar),
      B.t.data_ptr(), types.data, g.ld_first, g.stride_first, A.t.data_ptr(), types.data, g.ld_second,
      g.stride_second, be.ptr(types.scalar), out.data_ptr(), types.data, g.ldc, g.stride_c, batch,
      types.compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace ember::cuda
