// cuda::gemm and cuda::try_gemm_bias (cuda/gemm.h). Every CUDA matrix product is one
// cublasGemmStridedBatchedEx call (its _64 form, so no size needs to fit in an int), with
// strided and transposed operands passed as cuBLAS transposes rather than copied
// (cuda/gemm_layout.h); addmm with linear's bias row is one cublasLtMatmul that adds the bias in
// its epilogue (Note [The bias epilogue], cuda/gemm_epilogue.h).
//
// Accumulation, as PyTorch's defaults: float64 in float64; float32 in float32, or with TF32
// tensor cores when ember::backends::cuda::matmul::allow_tf32 is set (read at each product);
// float16 and bfloat16 read and written in 16 bits, accumulated in float (CUBLAS_COMPUTE_32F).
// PyTorch's allow_fp16_reduced_precision_reduction and allow_bf16_reduced_precision_reduction
// default to true, which lets cuBLAS reduce split-k partial sums in 16 bits; ember has no such
// switch and keeps that default: the handles run in CUBLAS_DEFAULT_MATH (no
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) and cuBLASLt is given no reduction-scheme
// restriction, so cuBLAS may do the same.
#include "ember/cuda/gemm.h"

#include <cublasLt.h>

#include <memory>
#include <type_traits>

#include "ember/core/backends.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/blas_handle.cuh"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/gemm_epilogue.h"
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

cublasComputeType_t compute_type(GemmCompute c) {
  switch (c) {
    case GemmCompute::kFloat32FastTF32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GemmCompute::kFloat64:
      return CUBLAS_COMPUTE_64F;
    case GemmCompute::kFloat32:
      break;
  }
  return CUBLAS_COMPUTE_32F;
}

BlasTypes blas_types(ScalarType t) {
  const cublasComputeType_t compute = compute_type(gemm_compute(t, backends::cuda::matmul::allow_tf32));
  switch (t) {
    case kFloat:
      return {CUDA_R_32F, compute, CUDA_R_32F};
    case kDouble:
      return {CUDA_R_64F, compute, CUDA_R_64F};
    case kHalf:
      return {CUDA_R_16F, compute, CUDA_R_32F};
    case kBFloat16:
      return {CUDA_R_16BF, compute, CUDA_R_32F};
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

// ---- cuBLASLt: the bias epilogue --------------------------------------------------------------

/// cuBLASLt's descriptors, destroyed when they go out of scope (also when a call throws).
template <class Handle, cublasStatus_t (*destroy)(Handle)>
struct LtDescriptor {
  Handle h = nullptr;
  LtDescriptor() = default;
  LtDescriptor(const LtDescriptor&) = delete;
  LtDescriptor& operator=(const LtDescriptor&) = delete;
  ~LtDescriptor() {
    if (h != nullptr) destroy(h);
  }
};
using MatmulDesc = LtDescriptor<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = LtDescriptor<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = LtDescriptor<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  EMBER_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

template <class T>
void set_attribute(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
  EMBER_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
}

void create_layout(MatrixLayout& layout, cudaDataType type, const LtMatrix& m) {
  EMBER_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout.h, type, static_cast<uint64_t>(m.rows),
                                                static_cast<uint64_t>(m.cols), m.ld));
}

/// The alignment cuBLASLt may assume of a matrix (gemm_epilogue.h's lt_alignment).
uint32_t alignment_of(const Tensor& t, int64_t ld) {
  return lt_alignment(reinterpret_cast<uintptr_t>(t.data_ptr()), ld * t.element_size());
}

int compute_capability_major(int device) {
  int major = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major;
}

}  // namespace

void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  EMBER_CHECK(out.is_contiguous(), "internal error: cuda::gemm's output must be contiguous");
  if (out.numel() == 0) return;
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

bool try_gemm_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias, const Scalar& beta,
                   const Scalar& alpha) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (!bias_epilogue_applies(out.dtype(), bias.sizes(), m, n, k, beta.toDouble(), alpha.toDouble())) return false;
  EMBER_CHECK(out.is_contiguous(), "internal error: cuda::try_gemm_bias's output must be contiguous");
  DeviceGuard guard(out.device());
  const BlasTypes types = blas_types(out.dtype());
  // A cuBLAS handle is a cuBLASLt handle too (cuBLAS's documentation: cast it); this one is
  // the calling thread's for the current device.
  auto lt = reinterpret_cast<cublasLtHandle_t>(blas_handle());
  const Operand A = operand(a), B = operand(b);
  const Tensor bias_vector = bias.reshape({n}).contiguous();  // cuBLASLt reads n values, stride 1
  const ColumnMajorGemm g = column_major_gemm(m, n, k, A.layout, B.layout);
  const LtLayouts shapes = lt_layouts(g);

  MatmulDesc desc;
  EMBER_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc.h, types.compute, types.scalar));
  set_attribute(desc.h, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(blas_op(g.trans_first)));
  set_attribute(desc.h, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(blas_op(g.trans_second)));
  set_attribute(desc.h, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_BIAS));
  set_attribute(desc.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_vector.data_ptr());  // in out's dtype

  MatrixLayout first, second, result;
  create_layout(first, types.data, shapes.first);
  create_layout(second, types.data, shapes.second);
  create_layout(result, types.data, shapes.out);

  const size_t workspace_bytes = lt_workspace_bytes(compute_capability_major(out.device().index()));
  Preference pref;
  EMBER_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.h));
  set_attribute(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<uint64_t>(workspace_bytes));
  set_attribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(B.t, g.ld_first));
  set_attribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(A.t, g.ld_second));
  const uint32_t out_align = alignment_of(out, g.ldc);
  set_attribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, out_align);
  set_attribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, out_align);

  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  // No fused kernel for this case: the caller takes the unfused path. cuBLASLt says so in
  // three ways: zero results, CUBLAS_STATUS_NOT_SUPPORTED from the query itself (seen for
  // layouts and alignments no kernel covers), or a result whose own state is not success.
  const cublasStatus_t query = cublasLtMatmulAlgoGetHeuristic(lt, desc.h, first.h, second.h, result.h, result.h,
                                                              pref.h, 1, &heuristic, &found);
  if (query == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  EMBER_CUBLAS_CHECK(query);
  if (found == 0 || heuristic.state != CUBLAS_STATUS_SUCCESS) return false;

  // The workspace comes from the caching allocator, on the current stream (the product's), so
  // it is reused only by work enqueued after the product there.
  const Tensor workspace =
      empty({static_cast<int64_t>(workspace_bytes)}, TensorOptions().dtype(kUInt8).device(out.device()));
  const BlasScalar al(alpha), zero(Scalar(0));
  // D = alpha * op(first) op(second) + bias, with beta 0: out (C) is not read.
  EMBER_CUBLAS_CHECK(cublasLtMatmul(lt, desc.h, al.ptr(types.scalar), B.t.data_ptr(), first.h, A.t.data_ptr(),
                                    second.h, zero.ptr(types.scalar), out.data_ptr(), result.h, out.data_ptr(),
                                    result.h, &heuristic.algo, workspace.data_ptr(), workspace_bytes,
                                    current_raw_stream()));
  return true;
}

}  // namespace ember::cuda
