// The choices cuda/gemm.cpp and cuda/gemm_lt.cpp make before calling cuBLAS or cuBLASLt, as
// plain C++ with no CUDA in it, so the CPU tests check them (tests/core/test_cuda_gemm_layout.cpp):
// which accumulation a dtype gets (TF32 or not), when addmm's bias add is fused into the
// product through cuBLASLt's bias epilogue, and the matrix shapes, alignments and workspace
// cuBLASLt is told about.
//
// Note [The bias epilogue]
// nn::functional::linear calls addmm(bias, x, w.t()): out = beta * bias + alpha * x @ w.t()
// with beta == 1 and bias one row of n values added to every row of the m x n product.
// cuBLASLt computes D = alpha * op(A) op(B) + beta * C and, with CUBLASLT_EPILOGUE_BIAS, adds a
// vector with one value per row of its column-major D to every column, in the same kernel. In
// the column-major view of ember's row-major output (Note [Row-major products on a
// column-major BLAS], gemm_layout.h) a row of out is a column of D, so linear's bias is exactly
// that vector, and out = alpha * x @ w.t() + bias is one cublasLtMatmul with beta 0 (out is not
// read first). That saves a pass over out (the copy of the broadcast bias that the unfused path
// makes before the GEMM adds to it). The epilogue adds the bias unscaled, so it serves beta == 1
// only; every other addmm takes the unfused path, as in PyTorch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/core/array_ref.h"
#include "ember/core/dtype.h"
#include "ember/cuda/gemm_layout.h"

namespace ember::cuda {

/// What a product accumulates in, named without cuBLAS's headers (cuda/gemm.cpp maps it to
/// cublasComputeType_t): float32 in full float32, or, with
/// ember::backends::cuda::matmul::allow_tf32, with its inputs rounded to TF32 on tensor cores
/// (CUBLAS_COMPUTE_32F_FAST_TF32); float16 and bfloat16 in float32; float64 in float64.
enum class GemmCompute { kFloat32, kFloat32FastTF32, kFloat64 };

inline GemmCompute gemm_compute(ScalarType t, bool allow_tf32) {
  if (t == kDouble) return GemmCompute::kFloat64;
  return t == kFloat && allow_tf32 ? GemmCompute::kFloat32FastTF32 : GemmCompute::kFloat32;
}

/// The largest size of any dimension handed to cuBLASLt. PyTorch keeps larger products (and
/// those with a dimension of 1, below) off its cuBLASLt path, where they have hit cuBLASLt
/// failures; ember follows the same bounds.
inline constexpr int64_t kLtMaxDim = int64_t{65535} * 32;

/// Whether addmm's self, of sizes `self_sizes`, is one row of n values that broadcasts over
/// the rows of an m x n output: shape [n] (linear's bias) or [1, n].
inline bool is_bias_row(IntArrayRef self_sizes, int64_t n) {
  if (self_sizes.size() == 1) return self_sizes[0] == n;
  return self_sizes.size() == 2 && self_sizes[0] == 1 && self_sizes[1] == n;
}

/// Whether addmm(self, a, b, beta, alpha) with a: m x k, b: k x n, on CUDA, goes through the
/// bias epilogue (Note [The bias epilogue]): a bias row, beta == 1 (the epilogue does not
/// scale the bias), a product to compute (alpha != 0, k > 0: else out is just beta * self, which
/// the unfused path writes without a product), float32, float16 or bfloat16 (float64 keeps the
/// cuBLAS path), and no dimension of 1 or past kLtMaxDim (see there).
inline bool bias_epilogue_applies(ScalarType dtype, IntArrayRef self_sizes, int64_t m, int64_t n, int64_t k,
                                  double beta, double alpha) {
  const bool dtype_ok = dtype == kFloat || dtype == kHalf || dtype == kBFloat16;
  const bool sizes_ok = m > 1 && n > 1 && k > 1 && m < kLtMaxDim && n < kLtMaxDim && k < kLtMaxDim;
  return dtype_ok && sizes_ok && beta == 1.0 && alpha != 0.0 && is_bias_row(self_sizes, n);
}

/// One matrix as cublasLtMatrixLayoutCreate takes it: column-major rows x cols, leading
/// dimension ld (>= rows).
struct LtMatrix {
  int64_t rows, cols, ld;
};

/// cuBLASLt's descriptions of the three matrices of a (non-batched) ColumnMajorGemm: its first
/// operand is stored k x m ("T") or m x k ("N"), its second n x k or k x n, and D is m x n.
struct LtLayouts {
  LtMatrix first, second, out;
};

inline LtLayouts lt_layouts(const ColumnMajorGemm& g) {
  return {{g.trans_first ? g.k : g.m, g.trans_first ? g.m : g.k, g.ld_first},
          {g.trans_second ? g.n : g.k, g.trans_second ? g.k : g.n, g.ld_second},
          {g.m, g.n, g.ldc}};
}

/// The alignment, in bytes, that cuBLASLt may assume of a matrix (its
/// CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES): the largest power of two, at most 256, that
/// divides both its address and its leading dimension in bytes. cuBLASLt assumes 256 unless
/// told, and a kernel chosen for 256-byte alignment reads a less aligned operand (a slice of
/// a larger tensor, an odd row length in float16) wrongly; so every product tells it.
inline uint32_t lt_alignment(uintptr_t address, int64_t ld_bytes) {
  uint32_t align = 256;
  while (align > 1 && (address % align != 0 || static_cast<uint64_t>(ld_bytes) % align != 0)) align /= 2;
  return align;
}

/// The workspace a fused product may use, taken from the caching allocator for each call:
/// what NVIDIA recommends for cuBLAS, 32 MiB on Hopper (compute capability 9) and later, 4 MiB
/// before (the same as the cuBLAS handles' workspaces, cuda/runtime/blas_handle.cpp).
inline size_t lt_workspace_bytes(int compute_capability_major) {
  return (compute_capability_major >= 9 ? size_t{32} : size_t{4}) << 20;
}

}  // namespace ember::cuda
