// The parts of cpu::gemm's driver that its files share: gemm.cpp (float and double, the
// instruction set dispatch, the tensor front end), gemm_16bit.cpp (Half and BFloat16) and
// gemm_matvec.cpp (matrix-vector products): per-thread scratch buffers, the packing of A and
// B micro-panels (Half/BFloat16 widened to float on the way), the split of C into tasks and
// the kernels in use. Internal to those files. Never include it from a file compiled with
// AVX-512 flags: its inline functions could be compiled with them (gemm_kernel.h says why).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/cpu/gemm_kernel.h"
#include "ember/core/dtype.h"

namespace ember::cpu::gemm_detail {

/// Below this many multiply-adds a product runs as one task on the calling thread.
inline constexpr int64_t kParallelWork = int64_t{1} << 21;

/// A per-thread, 64-byte aligned scratch buffer of at least n elements, kept between calls
/// (slot 0: the packed A block of a task, 1: the shared packed B panel, owned by the thread
/// that called gemm, or a Half/BFloat16 product's packed B block, 2: one edge micro-panel of
/// B, or a Half/BFloat16 product's block of C in float, 3: rows widened to float).
template <class T>
T* scratch(int slot, int64_t n) {
  struct Buffer {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
  };
  thread_local Buffer buffers[4];
  Buffer& buf = buffers[slot];
  const size_t want = static_cast<size_t>(n) * sizeof(T) + 64;
  if (buf.size < want) {
    buf.bytes.reset();  // free first: the old and the new buffer need not coexist
    buf.bytes.reset(new char[want]);
    buf.size = want;
  }
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(buf.bytes.get()) + 63) & ~uintptr_t{63});
}

// The helpers below have internal linkage in each file that includes this header (an unnamed
// namespace): each file inlines its own copies, as the compiler did when they were one file.
// scratch above is one function for all of them, so its buffers stay one set per thread.
namespace {

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t round_up(int64_t a, int64_t b) { return cdiv(a, b) * b; }

/// x in the type T its product computes in (S itself, or float for Half and BFloat16).
template <class S, class T>
T widen(S x) {
  return static_cast<T>(static_cast<opmath_t<S>>(x));
}

#if defined(__AVX2__) && defined(__F16C__)
/// Eight consecutive elements of src (float, Half or BFloat16) as floats.
template <class S>
__m256 load8(const S* src) {
  if constexpr (std::is_same_v<S, float>) {
    return _mm256_loadu_ps(src);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    if constexpr (std::is_same_v<S, BFloat16>)
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // the high half of a float
    else
      return _mm256_cvtph_ps(h);
  }
}
#endif

/// dst[i] = src[i] in T for i < n: a copy, or Half/BFloat16 widened to float (8 at a time).
template <class S, class T>
void widen_copy(const S* src, T* dst, int64_t n) {
  if constexpr (std::is_same_v<S, T>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else {
    int64_t i = 0;
#if defined(__AVX2__) && defined(__F16C__)
    if constexpr (std::is_same_v<T, float>)
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(src + i));
#endif
    for (; i < n; ++i) dst[i] = widen<S, T>(src[i]);
  }
}

#if defined(__AVX2__)
/// r[q] <- column q of the 8 x 8 matrix whose rows are r[0..7].
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int q = 0; q < 8; q += 2) {
    t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
    t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
  }
  for (int q = 0; q < 8; q += 4) {
    u[q] = _mm256_shuffle_ps(t[q], t[q + 2], 0x44);
    u[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], 0xEE);
    u[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0x44);
    u[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
  }
  for (int q = 0; q < 4; ++q) {
    r[q] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x20);
    r[q + 4] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x31);
  }
}

/// The first n (4, 6 or 8) floats of v to dst.
inline void store_first(float* dst, __m256 v, int n) {
  if (n == 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  const __m128 lo = _mm256_castps256_ps128(v);
  _mm_storeu_ps(dst, lo);
  if (n == 6) _mm_storel_pi(reinterpret_cast<__m64*>(dst + 4), _mm256_extractf128_ps(v, 1));
}
#endif

/// dst[p * R + i] = src[i * ld + p] for i < h, 0 for h <= i < R, p < kc: R rows of a
/// row-major matrix side by side (A stored untransposed into an A micro-panel, B stored
/// transposed into a B micro-panel), widened from S to T. 8 x 8 blocks through registers
/// for float.
template <int R, class S, class T>
void pack_transposed(const S* src, int64_t ld, int64_t h, int64_t kc, T* dst) {
  int64_t p = 0;
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (std::is_same_v<T, float> && R % 2 == 0 && R >= 4) {
    for (; p + 8 <= kc; p += 8)
      for (int g = 0; g < R; g += 8) {
        __m256 r[8];
        for (int q = 0; q < 8; ++q) r[q] = g + q < h ? load8(src + (g + q) * ld + p) : _mm256_setzero_ps();
        transpose8(r);
        const int width = std::min(8, R - g);
        for (int q = 0; q < 8; ++q) store_first(dst + (p + q) * R + g, r[q], width);
      }
  }
#endif
  for (; p < kc; ++p)
    for (int i = 0; i < R; ++i) dst[p * R + i] = i < h ? widen<S, T>(src[i * ld + p]) : T(0);
}

/// dst[p * R + i] = src[p * ld + i] for i < h, 0 for h <= i < R, p < kc: the rows of a
/// micro-panel already side by side in memory (A stored transposed, B untransposed),
/// widened from S to T.
template <int R, class S, class T>
void pack_direct(const S* src, int64_t ld, int64_t h, int64_t kc, T* dst) {
  if (h == R) {
    for (int64_t p = 0; p < kc; ++p) widen_copy(src + p * ld, dst + p * R, R);
    return;
  }
  for (int64_t p = 0; p < kc; ++p)
    for (int i = 0; i < R; ++i) dst[p * R + i] = i < h ? widen<S, T>(src[p * ld + i]) : T(0);
}

/// Rows [i0, i0 + rows) x depth [p0, p0 + kc) of op(A) as micro-panels of MR rows: panel r
/// at dst + r * MR * kc, its element (i, p) at [p * MR + i] (a short last panel padded).
/// Operands: a Product, or a Half/BFloat16 product's LowpOperands (widened on the way).
template <int MR, class Operands, class T>
void pack_a(const Operands& P, int64_t i0, int64_t rows, int64_t p0, int64_t kc, T* dst) {
  for (int64_t r = 0; r < rows; r += MR) {
    const int64_t h = std::min<int64_t>(MR, rows - r);
    const auto* s = P.a + (i0 + r) * P.ars + p0 * P.acs;
    if (P.ars == 1)
      pack_direct<MR>(s, P.acs, h, kc, dst + r * kc);
    else if (P.acs == 1)
      pack_transposed<MR>(s, P.ars, h, kc, dst + r * kc);
    else
      for (int64_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i)
          dst[r * kc + p * MR + i] = i < h ? widen<std::decay_t<decltype(*s)>, T>(s[i * P.ars + p * P.acs]) : T(0);
  }
}

/// Columns [j0, j0 + w) (w <= NR) x depth [p0, p0 + kc) of op(B) as one micro-panel:
/// element (p, j) at dst[p * NR + j], columns w..NR zero.
template <int NR, class Operands, class T>
void pack_b(const Operands& P, int64_t j0, int64_t w, int64_t p0, int64_t kc, T* dst) {
  const auto* s = P.b + p0 * P.brs + j0 * P.bcs;
  if (P.bcs == 1)
    pack_direct<NR>(s, P.brs, w, kc, dst);
  else if (P.brs == 1)
    pack_transposed<NR>(s, P.bcs, w, kc, dst);
  else
    for (int64_t p = 0; p < kc; ++p)
      for (int j = 0; j < NR; ++j)
        dst[p * NR + j] = j < w ? widen<std::decay_t<decltype(*s)>, T>(s[p * P.brs + j * P.bcs]) : T(0);
}

/// How a product splits C into tasks: tm x tn blocks, about 8 for a large product, fewer for
/// a smaller one, one below kParallelWork; an even number when more than one (two threads get
/// equal shares), each with as many register tiles as the others, give or take one. The shape
/// alone sets them (and they do not change any result anyway). w: C's columns in this block.
struct TaskGrid {
  int64_t tm, tn;
};
inline TaskGrid task_grid(int64_t m, int64_t w, int64_t work, int mr, int nr, int mc) {
  const int64_t row_tiles = cdiv(m, mr), col_tiles = cdiv(w, nr);
  int64_t tm = cdiv(m, mc), tn = 1;
  const int64_t want = work < kParallelWork ? 1 : work < 8 * kParallelWork ? 4 : 8;
  while (tm * tn < want) {
    const double rows = static_cast<double>(row_tiles) / static_cast<double>(tm);
    const double cols = static_cast<double>(col_tiles) / static_cast<double>(tn);
    if (rows >= cols && rows >= 2)
      ++tm;
    else if (cols >= 2)
      ++tn;
    else
      break;
  }
  tm = std::min(tm, row_tiles);
  if (tm * tn > 1 && tm * tn % 2 == 1) {
    if (tm < row_tiles)
      ++tm;
    else if (tn < col_tiles)
      ++tn;
  }
  return {tm, tn};
}

}  // namespace

/// The kernels products run on; nullptr where none runs here (then a plain loop computes).
const Kernels* active_kernels();

/// The vdpbf16ps kernel BFloat16 products run on; nullptr: they widen to float instead.
const Bf16Kernels* active_bf16_kernels();

/// c[r * cs] = alpha * sum_p M(r, p) x[p * xs] + beta * c[r * cs] (gemm's beta rules) for
/// r < R, with M(r, p) = mat[r * rs + p * ps] (gemm_matvec.cpp; S, T: float, float; double,
/// double; Half or BFloat16, float).
template <class S, class T>
void matvec(int64_t R, int64_t k, const S* mat, int64_t rs, int64_t ps, const S* x, int64_t xs, T alpha,
            T beta, S* c, int64_t cs);

/// gemm's contract for Half and BFloat16 (S), computed in float (gemm_16bit.cpp).
template <class S>
void low_precision_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const S* a,
                        int64_t lda, const S* b, int64_t ldb, float beta, S* c, int64_t ldc);

}  // namespace ember::cpu::gemm_detail
