// GEMM: the one function every CPU matrix product goes through (mm, bmm, addmm, baddbmm,
// mv, dot, matmul, einsum, conv's im2col products). Its implementation is ember's own
// (gemm.cpp: packed, cache-blocked, register-blocked micro-kernels per instruction set,
// gemm_isa.h). Beside it a plain triple loop, gemm_reference, that tests use as oracle.
#pragma once

#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/core/tensor.h"

namespace ember::cpu {

/// C = alpha * op(A) * op(B) + beta * C, all matrices row-major (C's row i starts at
/// c + i * ldc). op(A) is m x k: A is stored m x k (a[i * lda + p]) or, with trans_a, k x m
/// (a[p * lda + i]); likewise op(B) is k x n. As in BLAS, beta == 0 overwrites C without
/// reading it (NaNs there are ignored), and alpha == 0 or k == 0 leaves C = beta * C.
/// Defined for every dtype but bool; Half and BFloat16 compute in float, integers in their
/// own type with wrap-around. Large products run on ember's threads, split over blocks of
/// C (never over k); every element of C is summed in the same order however the product is
/// split, so results are bitwise the same for any thread count.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, opmath_t<T> alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, opmath_t<T> beta, T* c, int64_t ldc);

/// The same contract as gemm, computed by a plain triple loop accumulating in double
/// (floats) or with wrap-around (integers): the oracle of the tests.
template <class T>
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, opmath_t<T> alpha,
                    const T* a, int64_t lda, const T* b, int64_t ldb, opmath_t<T> beta, T* c, int64_t ldc);

/// out = beta * out + alpha * a @ b for tensors of one dtype (not bool), with any strides:
/// 2-D (a: m x k, b: k x n, out: m x n) or 3-D batches (b x m x k and so on), where batch
/// stride 0 (an expanded batch) is fine. out must be contiguous. A batch runs its items in
/// parallel; a single product splits itself.
void addmm_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha);

}  // namespace ember::cpu
