// GEMM on the CPU: Eigen's product for float and double, float for Half/BFloat16, a plain
// loop for integers (PyTorch multiplies integer matrices on the CPU too), and the tensor
// front end that maps strided operands onto it. The Eigen product itself is compiled once
// per instruction set in gemm_<isa>.cpp (the only files that include Eigen); this file
// picks one at run time (gemm_isa.h).
#include "ember/core/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/gemm_isa.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {

// ---- instruction set dispatch (gemm_isa.h) -------------------------------------------------
namespace {

bool cpu_supports(GemmIsa isa) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();  // products may run from static initialisers, before libgcc's own
  switch (isa) {
    case GemmIsa::kGeneric:
      return true;
    case GemmIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GemmIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  return false;
#else
  return isa == GemmIsa::kGeneric;
#endif
}

const gemm_detail::Kernels* compiled_kernels(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kGeneric:
      return gemm_detail::generic_kernels();
    case GemmIsa::kAvx2:
      return gemm_detail::avx2_kernels();
    case GemmIsa::kAvx512:
      return gemm_detail::avx512_kernels();
  }
  return nullptr;
}

constexpr GemmIsa kIsas[] = {GemmIsa::kGeneric, GemmIsa::kAvx2, GemmIsa::kAvx512};

/// EMBER_GEMM_ISA when set, else AVX2 where it runs. Not AVX-512: on the AMD EPYC this was
/// measured on, Eigen's AVX-512 kernel was within noise of its AVX2 one (conv, and matmul
/// from n = 128; bench/README.md), and 512-bit code lowers the clock on some Intel parts.
GemmIsa initial_isa() {
  const GemmIsa fallback = gemm_isa_available(GemmIsa::kAvx2) ? GemmIsa::kAvx2 : GemmIsa::kGeneric;
  const char* env = std::getenv("EMBER_GEMM_ISA");
  if (env == nullptr || *env == '\0') return fallback;
  for (GemmIsa isa : kIsas)
    if (std::strcmp(env, gemm_isa_name(isa)) == 0 && gemm_isa_available(isa)) return isa;
  // Not an exception: the first product may run on a worker thread, where one would abort
  // the program. A benchmark must not silently measure another kernel, hence the message.
  std::fprintf(stderr,
               "ember: EMBER_GEMM_ISA=%s is not generic, avx2 or avx512 available on this build and CPU; "
               "using %s\n",
               env, gemm_isa_name(fallback));
  return fallback;
}

/// The kernels in use; set once from initial_isa() (thread-safe static), then by set_gemm_isa.
std::atomic<const gemm_detail::Kernels*>& active_slot() {
  static std::atomic<const gemm_detail::Kernels*> slot{compiled_kernels(initial_isa())};
  return slot;
}

}  // namespace

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kGeneric:
      return "generic";
    case GemmIsa::kAvx2:
      return "avx2";
    case GemmIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool gemm_isa_available(GemmIsa isa) { return compiled_kernels(isa) != nullptr && cpu_supports(isa); }

GemmIsa gemm_isa() {
  const gemm_detail::Kernels* k = active_slot().load(std::memory_order_relaxed);
  for (GemmIsa isa : kIsas)
    if (compiled_kernels(isa) == k) return isa;
  return GemmIsa::kGeneric;
}

void set_gemm_isa(GemmIsa isa) {
  EMBER_CHECK(gemm_isa_available(isa), "set_gemm_isa: this build or this CPU has no ", gemm_isa_name(isa),
              " GEMM kernel");
  active_slot().store(compiled_kernels(isa), std::memory_order_relaxed);
}

namespace {

/// Below this many multiply-adds a product runs as one call on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 21;
/// Rows (or columns) of C per parallel block. Fixed, so how C is split, and with it every
/// rounding, never depends on the thread count.
constexpr int64_t kBlock = 128;

/// One Eigen product on the calling thread (T is float or double), by the active kernels.
template <class T>
void eigen_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const gemm_detail::Kernels* kernels = active_slot().load(std::memory_order_relaxed);
  if constexpr (std::is_same_v<T, float>)
    kernels->f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    kernels->f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
