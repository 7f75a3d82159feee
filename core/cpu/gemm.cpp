// GEMM on the CPU: Eigen's product for float and double, float for Half/BFloat16, a plain
// loop for integers (PyTorch multiplies integer matrices on the CPU too), and the tensor
// front end that maps strided operands onto it. Eigen headers appear in this file only.
#include "ember/core/cpu/gemm.h"

#include <algorithm>
#include <type_traits>
#include <vector>

// ember's parallel_for is the only thread pool (DESIGN.md, "Performance rules": never run
// two pools at once), so Eigen must not start its own: each Eigen product below runs on
// one thread, and large products are split into blocks that run on ember's threads.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>

#include "ember/autograd/grad_mode.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

/// Below this many multiply-adds a product runs as one call on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 21;
/// Rows (or columns) of C per parallel block. Fixed, so how C is split, and with it every
/// rounding, never depends on the thread count.
constexpr int64_t kBlock = 128;

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMajor<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using MutMap = Eigen::Map<RowMajor<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

/// One Eigen product on the calling thread (T is float or double).
template <class T>
void eigen_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  MutMap<T> C(c, m, n, Eigen::OuterStride<>(ldc));
  if (beta == T(0))
    C.setZero();  // overwrite, so NaNs in C do not survive (BLAS)
  else if (beta != T(1))
    C *= beta;
  if (k == 0 || alpha == T(0)) return;
  ConstMap<T> A(a, ta ? k : m, ta ? m : k, Eigen::OuterStride<>(lda));
  ConstMap<T> B(b, tb ? n : k, tb ? k : n, Eigen::OuterStride<>(ldb));
  // Eigen folds the scalar factor and the transposes into its kernel: no temporaries.
  auto product = [&](const auto& opa, const auto& opb) { C.noalias() += alpha * opa * opb; };
  if (ta && tb)
    product(A.transpose(), B.transpose());
  else if (ta)
    product(A.transpose(), B);
  else if (tb)
    product(A, B.transpose());
  else
    product(A, B);
}

/// Splits a large product into fixed blocks of C's rows (or columns, when C is wide) and
/// runs them on ember's threads; small products run as they are.
template <class T>
void blocked_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m * n * k < kParallelWork) {
    eigen_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const bool by_rows = m >= n;
  const int64_t len = by_rows ? m : n;
  parallel_for((len + kBlock - 1) / kBlock, 1, [&](int64_t first, int64_t last) {
    for (int64_t blk = first; blk < last; ++blk) {
      int64_t s = blk * kBlock, e = std::min(len, s + kBlock);
      if (by_rows)  // rows s..e of op(A) and of C
        eigen_gemm(ta, tb, e - s, n, k, alpha, ta ? a + s : a + s * lda, lda, b, ldb, beta, c + s * ldc, ldc);
      else  // columns s..e of op(B) and of C
        eigen_gemm(ta, tb, m, e - s, k, alpha, a, lda, tb ? b + s * ldb : b + s, ldb, beta, c + s, ldc);
    }
  });
}

/// Integer products wrap around as PyTorch's do; unsigned arithmetic makes that defined
/// behaviour in C++ (32 bits at least, so small types do not promote to signed int).
template <class T>
using WrapInt = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

template <class T>
void integer_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  using W = WrapInt<T>;
  const int64_t a_col = ta ? lda : 1, a_row = ta ? 1 : lda;  // strides of op(A)
  const int64_t b_col = tb ? ldb : 1, b_row = tb ? 1 : ldb;  // strides of op(B)
  auto row = [&](int64_t i) {
    T* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == T(0) ? T(0) : static_cast<T>(W(beta) * W(ci[j]));
    for (int64_t p = 0; p < k; ++p) {
      W aip = W(alpha) * W(a[i * a_row + p * a_col]);
      const T* bp = b + p * b_row;
      for (int64_t j = 0; j < n; ++j) ci[j] = static_cast<T>(W(ci[j]) + aip * W(bp[j * b_col]));
    }
  };
  int64_t grain = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, n * k));
  parallel_for(m, grain, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) row(i);
  });
}

/// Half and BFloat16: widen both operands (and C when beta reads it) to float, multiply
/// there, and round once when writing C.
template <class T>
void low_precision_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const T* a,
                        int64_t lda, const T* b, int64_t ldb, float beta, T* c, int64_t ldc) {
  std::vector<float> fa(static_cast<size_t>(m * k)), fb(static_cast<size_t>(k * n)),
      fc(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) fa[i * k + p] = static_cast<float>(ta ? a[p * lda + i] : a[i * lda + p]);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) fb[p * n + j] = static_cast<float>(tb ? b[j * ldb + p] : b[p * ldb + j]);
  if (beta != 0.0f)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) fc[i * n + j] = static_cast<float>(c[i * ldc + j]);
  blocked_gemm<float>(false, false, m, n, k, alpha, fa.data(), std::max<int64_t>(1, k), fb.data(),
                      std::max<int64_t>(1, n), beta, fc.data(), std::max<int64_t>(1, n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = static_cast<T>(fc[i * n + j]);
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, opmath_t<T> alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, opmath_t<T> beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    blocked_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (is_float_v<T>)
    low_precision_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    integer_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, opmath_t<T> alpha,
                    const T* a, int64_t lda, const T* b, int64_t ldb, opmath_t<T> beta, T* c, int64_t ldc) {
  using Acc = std::conditional_t<is_float_v<T>, double, WrapInt<T>>;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      Acc sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        T av = trans_a ? a[p * lda + i] : a[i * lda + p];
        T bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        sum +=
            static_cast<Acc>(static_cast<opmath_t<T>>(av)) * static_cast<Acc>(static_cast<opmath_t<T>>(bv));
      }
      Acc r = static_cast<Acc>(alpha) * sum;
      if (beta != opmath_t<T>(0))
        r += static_cast<Acc>(beta) * static_cast<Acc>(static_cast<opmath_t<T>>(c[i * ldc + j]));
      c[i * ldc + j] = static_cast<T>(static_cast<opmath_t<T>>(r));
    }
  }
}

// Every dtype but bool (PyTorch has no boolean matrix product either).
#define EMBER_INSTANTIATE_GEMM(T)                                                                        \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, opmath_t<T>, const T*, int64_t, const T*, \
                        int64_t, opmath_t<T>, T*, int64_t);                                              \
  template void gemm_reference<T>(bool, bool, int64_t, int64_t, int64_t, opmath_t<T>, const T*, int64_t, \
                                  const T*, int64_t, opmath_t<T>, T*, int64_t);
EMBER_INSTANTIATE_GEMM(uint8_t)
EMBER_INSTANTIATE_GEMM(int8_t)
EMBER_INSTANTIATE_GEMM(int16_t)
EMBER_INSTANTIATE_GEMM(int32_t)
EMBER_INSTANTIATE_GEMM(int64_t)
EMBER_INSTANTIATE_GEMM(Half)
EMBER_INSTANTIATE_GEMM(BFloat16)
EMBER_INSTANTIATE_GEMM(float)
EMBER_INSTANTIATE_GEMM(double)
#undef EMBER_INSTANTIATE_GEMM

// ---- tensors -----------------------------------------------------------------------------
namespace {

/// How one operand reaches gemm: the tensor read (the input itself, or a contiguous copy
/// when neither of its matrix strides is 1), whether its matrices are stored transposed,
/// their leading dimension, and the stride between batch items (0 for a 2-D operand).
struct BlasOperand {
  Tensor t;
  bool trans;
  int64_t ld, batch_stride;
};

BlasOperand blas_operand(const Tensor& x) {
  const int64_t d = x.dim(), r = x.size(d - 2), c = x.size(d - 1);
  const int64_t s0 = x.stride(d - 2), s1 = x.stride(d - 1), bs = d == 3 ? x.stride(0) : 0;
  // A stride is free when its dimension has size 1; a leading dimension must cover a row.
  if ((c == 1 || s1 == 1) && (r == 1 || s0 >= std::max<int64_t>(1, c)))
    return {x, false, r == 1 ? std::max<int64_t>(1, c) : s0, bs};
  if ((r == 1 || s0 == 1) && (c == 1 || s1 >= std::max<int64_t>(1, r)))
    return {x, true, c == 1 ? std::max<int64_t>(1, r) : s1, bs};
  Tensor y = x.contiguous();
  return {y, false, std::max<int64_t>(1, c), d == 3 ? r * c : 0};
}

}  // namespace

void addmm_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  EMBER_CHECK(out.is_contiguous(), "addmm_out: the output must be contiguous");
  if (out.numel() == 0) return;
  NoGradGuard no_grad;  // copies made here belong to no graph
  const BlasOperand A = blas_operand(a), B = blas_operand(b);
  const int64_t d = out.dim(), nb = d == 3 ? out.size(0) : 1;
  const int64_t m = out.size(d - 2), n = out.size(d - 1), k = a.size(d - 1);
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      detail::throw_error("addmm_out: bool matrices cannot be multiplied");
    } else {
      using M = opmath_t<T>;
      const M al = alpha.to<M>(), be = beta.to<M>();
      const T* pa = A.t.template data_ptr<T>();
      const T* pb = B.t.template data_ptr<T>();
      T* pc = out.data_ptr<T>();
      auto item = [&](int64_t i) {
        gemm<T>(A.trans, B.trans, m, n, k, al, pa + i * A.batch_stride, A.ld, pb + i * B.batch_stride, B.ld,
                be, pc + i * m * n, n);
      };
      if (nb == 1) {
        item(0);  // one product: gemm splits it itself
        return;
      }
      // A batch: items in parallel (gemm stays on its thread inside a parallel region).
      int64_t grain = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, m * n * k));
      parallel_for(nb, grain, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) item(i);
      });
    }
  });
}

}  // namespace ember::cpu
