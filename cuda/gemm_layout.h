// How a product of ember's row-major, strided matrices is handed to cuBLAS, which reads
// column-major ones. Plain C++ with no CUDA in it, so the tests check the mapping on the CPU
// (tests/core/test_cuda_gemm_layout.cpp); cuda/gemm.cpp makes the cuBLAS call from it.
//
// Note [Row-major products on a column-major BLAS]
// A row-major r x c matrix whose rows are ld elements apart is, read column-major, its
// transpose: a c x r matrix with leading dimension ld. So for C = A B ember asks cuBLAS for
// C^T = B^T A^T: B is cuBLAS's first operand and A its second, cuBLAS's (m, n) are ember's
// (n, m), and C (contiguous, m x n) is cuBLAS's n x m result with ldc = n. An operand stored
// row-major is then passed as it is ("N"), one stored column-major (a transposed view such as
// w.t()) as "T". Only an operand that is neither (a slice with a step along its columns, a
// matrix expanded along both dims) is copied, contiguous, first: PyTorch's rule too.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ember::cuda {

/// One operand (a matrix, or a batch of them batch_stride elements apart) as cuBLAS reads it.
struct BlasMatrix {
  bool copy = false;       // neither layout fits: pass x.contiguous() instead
  bool col_major = false;  // element (i, j) at i + j * ld (else at i * ld + j)
  int64_t ld = 1;          // leading dimension, >= 1 and >= the length it strides over
  int64_t batch_stride = 0;
};

/// The layout of a rows x cols matrix whose element (i, j) sits at i * row_stride +
/// j * col_stride. A dimension of size 1 has no stride that matters, so a row or a column
/// vector fits either layout with any stride (an expanded one, stride 0, included).
inline BlasMatrix blas_matrix(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                              int64_t batch_stride) {
  const int64_t min_row_ld = std::max<int64_t>(1, cols), min_col_ld = std::max<int64_t>(1, rows);
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= min_row_ld))
    return {false, false, rows == 1 ? min_row_ld : row_stride, batch_stride};
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= min_col_ld))
    return {false, true, cols == 1 ? min_col_ld : col_stride, batch_stride};
  return {true, false, 1, 0};
}

/// The arguments of cuBLAS's strided batched GEMM (column-major) that compute the row-major
/// batch C = op(A) op(B), C: m x n, as C^T = B^T A^T (see the note above).
struct ColumnMajorGemm {
  bool trans_first, trans_second;  // cuBLAS's transa (for B) and transb (for A)
  int64_t m, n, k;                 // cuBLAS's sizes: ember's n, m, k
  int64_t ld_first, ld_second, ldc;
  int64_t stride_first, stride_second, stride_c;
};

/// a: the m x k operand, b: the k x n one (neither needing a copy); C is contiguous.
inline ColumnMajorGemm column_major_gemm(int64_t m, int64_t n, int64_t k, const BlasMatrix& a,
                                         const BlasMatrix& b) {
  // Row-major B read column-major already is the B^T that C^T = B^T A^T needs; column-major B
  // is B itself and needs the transpose. Likewise A.
  return {b.col_major, a.col_major, n, m, k, b.ld, a.ld, n, b.batch_stride, a.batch_stride, m * n};
}

}  // namespace ember::cuda
