// cpu::gemm's matrix-vector products (m == 1 or n == 1) for every floating dtype: a register
// tile would be mostly padding there, and packing would cost as much as the product, so
// these are dot products or axpy sweeps over the matrix, memory-bound. A file apart from
// gemm.cpp's blocked driver: they share only the scratch buffers and the widening
// (gemm_internal.h).
#include <algorithm>
#include <cmath>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/cpu/gemm_internal.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu::gemm_detail {
namespace {

#if defined(__AVX2__) && defined(__FMA__)
template <class T>
struct Simd;
template <>
struct Simd<float> {
  using V = __m256;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
template <>
struct Simd<double> {
  using V = __m256d;
  static constexpr int W = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
};
#endif

/// sum over p < k of a[p] * x[p], in a fixed order (four vector partial sums, then the tail).
template <class T>
T dot(const T* a, const T* x, int64_t k) {
  int64_t p = 0;
  T sum = T(0);
#if defined(__AVX2__) && defined(__FMA__)
  using S = Simd<T>;
  constexpr int W = S::W;
  typename S::V s0 = S::zero(), s1 = S::zero(), s2 = S::zero(), s3 = S::zero();
  for (; p + 4 * W <= k; p += 4 * W) {
    s0 = S::fma(S::load(a + p), S::load(x + p), s0);
    s1 = S::fma(S::load(a + p + W), S::load(x + p + W), s1);
    s2 = S::fma(S::load(a + p + 2 * W), S::load(x + p + 2 * W), s2);
    s3 = S::fma(S::load(a + p + 3 * W), S::load(x + p + 3 * W), s3);
  }
  for (; p + W <= k; p += W) s0 = S::fma(S::load(a + p), S::load(x + p), s0);
  alignas(32) T lanes[W];
  S::store(lanes, S::add(S::add(s0, s1), S::add(s2, s3)));
  for (int l = 0; l < W; ++l) sum += lanes[l];
#endif
  for (; p < k; ++p) sum = std::fma(a[p], x[p], sum);
  return sum;
}

/// acc[r] = fma(x[q], rows[q][r], acc[r]) for q = 0 .. Q-1 in turn, r < len (the same
/// roundings in every lane as one row at a time; Q rows per pass over acc).
template <int Q, class T>
void axpy_rows(const T* x, const T* const* rows, T* acc, int64_t len) {
  int64_t r = 0;
#if defined(__AVX2__) && defined(__FMA__)
  using S = Simd<T>;
  typename S::V xv[Q];
  for (int q = 0; q < Q; ++q) xv[q] = S::set1(x[q]);
  for (; r + S::W <= len; r += S::W) {
    typename S::V v = S::load(acc + r);
    for (int q = 0; q < Q; ++q) v = S::fma(xv[q], S::load(rows[q] + r), v);
    S::store(acc + r, v);
  }
#endif
  for (; r < len; ++r)
    for (int q = 0; q < Q; ++q) acc[r] = std::fma(x[q], rows[q][r], acc[r]);
}

}  // namespace

/// c[r * cs] = alpha * sum_p M(r, p) x[p * xs] + beta * c[r * cs] (gemm's beta rules) for
/// r < R, with M(r, p) = mat[r * rs + p * ps]. Each r's sum has one fixed order, whatever
/// the split over threads. Half and BFloat16 (S) compute in float (T): the vector, and the
/// matrix a row (or a block of rows) at a time, widened into per-thread buffers, so that the
/// sums are those of the float product on widened operands, rounded once into C.
template <class S, class T>
void matvec(int64_t R, int64_t k, const S* mat, int64_t rs, int64_t ps, const S* x, int64_t xs, T alpha, T beta,
            S* c, int64_t cs) {
  constexpr bool kWiden = !std::is_same_v<S, T>;
  const T* xv = nullptr;
  if constexpr (kWiden) {
    T* buf = scratch<T>(1, k);
    for (int64_t p = 0; p < k; ++p) buf[p] = widen<S, T>(x[p * xs]);
    xv = buf;
  } else {
    xv = x;
    if (xs != 1 && k > 1) {
      T* buf = scratch<T>(1, k);
      for (int64_t p = 0; p < k; ++p) buf[p] = x[p * xs];
      xv = buf;
    }
  }
  auto finish = [&](int64_t r, T acc) {
    S& cv = c[r * cs];
    cv = static_cast<S>(beta == T(0) ? alpha * acc : std::fma(alpha, acc, beta * widen<S, T>(cv)));
  };
  const int64_t grain = std::max<int64_t>(64, kParallelWork / std::max<int64_t>(1, k));
  if (ps == 1 || k == 1) {  // each output a dot product of contiguous vectors
    parallel_for(R, grain, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const S* row = mat + r * rs;
        if constexpr (kWiden) {
          T* wide = scratch<T>(3, k);
          widen_copy(row, wide, k);
          finish(r, dot(static_cast<const T*>(wide), xv, k));
        } else {
          finish(r, dot(row, xv, k));
        }
      }
    });
  } else if (rs == 1) {  // sweep the matrix row by row, accumulating a block of outputs
    parallel_for(R, grain, [&](int64_t first, int64_t last) {
      constexpr int64_t kBlock = 2048;
      T* acc = scratch<T>(0, kBlock);
      T* wide = kWiden ? scratch<T>(3, 4 * kBlock) : nullptr;
      // Row p's block [r0, r0 + len) as T: in place, or widened into wide's slot q.
      auto row_of = [&](int64_t p, int64_t r0, int64_t len, int q) -> const T* {
        if constexpr (kWiden) {
          widen_copy(mat + p * ps + r0, wide + q * kBlock, len);
          return wide + q * kBlock;
        } else {
          (void)len, (void)q;
          return mat + p * ps + r0;
        }
      };
      for (int64_t r0 = first; r0 < last; r0 += kBlock) {
        const int64_t len = std::min(kBlock, last - r0);
        std::fill(acc, acc + len, T(0));
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
          const T* rows[4] = {row_of(p, r0, len, 0), row_of(p + 1, r0, len, 1), row_of(p + 2, r0, len, 2),
                              row_of(p + 3, r0, len, 3)};
          axpy_rows<4>(xv + p, rows, acc, len);
        }
        for (; p < k; ++p) {
          const T* row = row_of(p, r0, len, 0);
          axpy_rows<1>(xv + p, &row, acc, len);
        }
        for (int64_t r = 0; r < len; ++r) finish(r0 + r, acc[r]);
      }
    });
  } else {
    parallel_for(R, grain, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        T acc = T(0);
        for (int64_t p = 0; p < k; ++p) acc = std::fma(widen<S, T>(mat[r * rs + p * ps]), xv[p], acc);
        finish(r, acc);
      }
    });
  }
}

#define EMBER_INSTANTIATE_MATVEC(S, T)                                                                  \
  template void matvec<S, T>(int64_t, int64_t, const S*, int64_t, int64_t, const S*, int64_t, T, T, S*, \
                             int64_t);
EMBER_INSTANTIATE_MATVEC(float, float)
EMBER_INSTANTIATE_MATVEC(double, double)
EMBER_INSTANTIATE_MATVEC(Half, float)
EMBER_INSTANTIATE_MATVEC(BFloat16, float)
#undef EMBER_INSTANTIATE_MATVEC

}  // namespace ember::cpu::gemm_detail
