// The CPU kernel of max pooling: the maximum and its index over each window of every plane,
// with the 2x2 stride-2 windows of CNNs on their own row-at-a-time path and, for float, in
// AVX2 registers. Apart from core/ops/pooling.cpp (the ops, their shape checks and backward)
// as DESIGN puts kernels, and SIMD, in core/cpu/.
#include "ember/core/cpu/pooling.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/dtype.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {

using resample::AxisMap;

namespace {

/// take ? a : b through a bit mask for floating types: GCC compiles the plain ?: on floats to
/// a branch, which mispredicts about half the time on activations.
template <class M>
M select(bool take, M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    using U = std::conditional_t<sizeof(M) == 4, uint32_t, uint64_t>;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(M));
    std::memcpy(&ub, &b, sizeof(M));
    const U mask = U(0) - static_cast<U>(take);
    ua = (ua & mask) | (ub & ~mask);
    std::memcpy(&a, &ua, sizeof(M));
    return a;
  } else {
    return take ? a : b;
  }
}

/// Whether output o of an axis covers exactly inputs 2o and 2o + 1 for every o: kernel 2,
/// stride 2, no padding, dilation 1 and no partial last window (ceil_mode on odd sizes).
bool is_pairs(const AxisMap& m) {
  const int64_t n = m.out_size();
  if (static_cast<int64_t>(m.index.size()) != 2 * n) return false;
  for (int64_t o = 0; o < n; ++o)
    if (m.start[o] != 2 * o || m.index[2 * o] != 2 * o || m.index[2 * o + 1] != 2 * o + 1) return false;
  return true;
}

/// One row of 2x2 windows (inputs r0[2o], r0[2o + 1], r1[2o], r1[2o + 1] for output o < n):
/// maxima into y and, per window, the winner's place in scan order (0 top-left, 1 top-right,
/// 2 bottom-left, 3 bottom-right) into code. The same rule as max_planes in the same order,
/// in straight-line selects that GCC vectorizes for float (codes as wide as the values).
/// The window's first element starts the scan: max_planes's first step (-inf, or the lowest
/// integer, against it) always ends with that element and its position.
template <class T, class M, class C>
void max_row_2x2(const T* __restrict__ r0, const T* __restrict__ r1, T* __restrict__ y, C* __restrict__ code,
                 int64_t n) {
  auto step = [](M v, C place, M& best, C& at) {
    bool take = v > best;
    if constexpr (is_float_v<T>) take = take | (v != v);  // NaN wins, even over an earlier NaN
    best = take ? v : best;
    at = take ? place : at;
  };
  for (int64_t o = 0; o < n; ++o) {
    M best = static_cast<M>(r0[2 * o]);
    C at = 0;
    step(static_cast<M>(r0[2 * o + 1]), 1, best, at);
    step(static_cast<M>(r1[2 * o]), 2, best, at);
    step(static_cast<M>(r1[2 * o + 1]), 3, best, at);
    y[o] = static_cast<T>(best);
    code[o] = at;
  }
}

/// max_planes for 2x2 windows at stride 2 (is_pairs on both axes): the CNN's pooling, ~10%
/// of a training step through the general loop. Rows are done in chunks: maxima and codes
/// first (max_row_2x2), then the codes become plane indices.
template <class T>
void max_planes_2x2(const T* x, T* y, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t Ho,
                    int64_t Wo) {
  using M = opmath_t<T>;
  using C = std::conditional_t<sizeof(M) == 4, uint32_t, uint64_t>;
  constexpr int64_t kChunk = 256;
  parallel_for(planes, resample::plane_grain(Ho * Wo * 5), [&](int64_t b, int64_t e) {
    C code[kChunk];
    for (int64_t p = b; p < e; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const T* r0 = x + p * H * W + 2 * oh * W;
        const int64_t out_row = (p * Ho + oh) * Wo;
        for (int64_t o0 = 0; o0 < Wo; o0 += kChunk) {
          const int64_t n = std::min(kChunk, Wo - o0);
          max_row_2x2<T, M, C>(r0 + 2 * o0, r0 + W + 2 * o0, y + out_row + o0, code, n);
          // place 0..3 -> row offset 0 or W, column offset 0 or 1 from the window's corner.
          const int64_t corner = 2 * oh * W + 2 * o0;
          int64_t* io = idx + out_row + o0;
          for (int64_t o = 0; o < n; ++o) {
            const uint64_t c = code[o];
            io[o] = corner + 2 * o + static_cast<int64_t>(c & 1u) + (-static_cast<int64_t>(c >> 1) & W);
          }
        }
      }
  });
}

#if defined(__AVX2__)
/// max_row_2x2 and the index arithmetic of max_planes_2x2 for float, eight windows per step in
/// AVX2 registers: outputs o < n (n <= 8) of a row whose top-left inputs are r0[2o] and whose
/// bottom row is r1 = r0 + W; `corner` is r0's index in the plane. Short tails load and store
/// through lane masks, so rows of any length (the CNN's have 14 and 7 windows) stay
/// branch-free. The scan is max_planes's: start at the top-left element, take v when v > best
/// or v is NaN, in the order top-left, top-right, bottom-left, bottom-right.
inline void max8_2x2_avx2(const float* r0, const float* r1, float* y, int64_t* idx, int64_t corner, int64_t W,
                          int n) {
  __m256 a0, a1, b0, b1;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  if (n == 8) {
    a0 = _mm256_loadu_ps(r0);
    a1 = _mm256_loadu_ps(r0 + 8);
    b0 = _mm256_loadu_ps(r1);
    b1 = _mm256_loadu_ps(r1 + 8);
  } else {
    const __m256i two_n = _mm256_set1_epi32(2 * n);
    const __m256i m0 = _mm256_cmpgt_epi32(two_n, lane);
    const __m256i m1 = _mm256_cmpgt_epi32(two_n, _mm256_add_epi32(lane, _mm256_set1_epi32(8)));
    a0 = _mm256_maskload_ps(r0, m0);
    a1 = _mm256_maskload_ps(r0 + 8, m1);
    b0 = _mm256_maskload_ps(r1, m0);
    b1 = _mm256_maskload_ps(r1 + 8, m1);
  }
  // Even / odd elements of each row pair, in window order (shuffle, then fix the 128-bit halves).
  auto even = [](__m256 lo, __m256 hi) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
  };
  auto odd = [](__m256 lo, __m256 hi) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
  };
  __m256 best = even(a0, a1);
  __m256i code = _mm256_setzero_si256();
  auto step = [&](__m256 v, int place) {
    __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    best = _mm256_blendv_ps(best, v, take);
    code = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(_mm256_set1_epi32(place)), take));
  };
  step(odd(a0, a1), 1);
  step(even(b0, b1), 2);
  step(odd(b0, b1), 3);
  // Index of the winner: corner + 2 o + (code & 1) + (code >> 1) W, in 64-bit lanes.
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i col = _mm256_and_si256(code, one);
  const __m256i row = _mm256_cmpeq_epi32(_mm256_srli_epi32(code, 1), one);  // all ones for the bottom row
  const __m256i w64 = _mm256_set1_epi64x(W), base = _mm256_set1_epi64x(corner);
  const __m256i step_lo = _mm256_setr_epi64x(0, 2, 4, 6), step_hi = _mm256_setr_epi64x(8, 10, 12, 14);
  __m256i i_lo = _mm256_add_epi64(_mm256_add_epi64(base, step_lo), _mm256_cvtepu32_epi64(_mm256_castsi256_si128(col)));
  __m256i i_hi =
      _mm256_add_epi64(_mm256_add_epi64(base, step_hi), _mm256_cvtepu32_epi64(_mm256_extracti128_si256(col, 1)));
  i_lo = _mm256_add_epi64(i_lo, _mm256_and_si256(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(row)), w64));
  i_hi = _mm256_add_epi64(i_hi, _mm256_and_si256(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(row, 1)), w64));
  if (n == 8) {
    _mm256_storeu_ps(y, best);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx), i_lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + 4), i_hi);
  } else {
    // Through a buffer: masked stores are slow on some CPUs (microcoded on AMD Zen).
    alignas(32) float yb[8];
    alignas(32) int64_t ib[8];
    _mm256_store_ps(yb, best);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ib), i_lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ib + 4), i_hi);
    for (int o = 0; o < n; ++o) {
      y[o] = yb[o];
      idx[o] = ib[o];
    }
  }
}

/// max_planes_2x2 for float with max8_2x2_avx2.
void max_planes_2x2_avx2(const float* x, float* y, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t Ho,
                         int64_t Wo) {
  parallel_for(planes, resample::plane_grain(Ho * Wo * 5), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const float* r0 = x + p * H * W + 2 * oh * W;
        const int64_t out_row = (p * Ho + oh) * Wo;
        for (int64_t o0 = 0; o0 < Wo; o0 += 8)
          max8_2x2_avx2(r0 + 2 * o0, r0 + W + 2 * o0, y + out_row + o0, idx + out_row + o0, 2 * oh * W + 2 * o0, W,
                        static_cast<int>(std::min<int64_t>(8, Wo - o0)));
      }
  });
}
#endif

}  // namespace

/// Max over each window; ties keep the first position, NaN wins (PyTorch's CPU kernel).
template <class T>
void max_planes(const T* x, T* y, int64_t* idx, int64_t planes, const AxisMap& h, const AxisMap& w) {
  using M = opmath_t<T>;
  const int64_t W = w.in_size, HW = h.in_size * W, Ho = h.out_size(), Wo = w.out_size();
  const int64_t taps = static_cast<int64_t>(h.index.size() * w.index.size()) / std::max<int64_t>(1, Ho * Wo);
  if (is_pairs(h) && is_pairs(w)) {
#if defined(__AVX2__)
    if constexpr (std::is_same_v<T, float>) {
      max_planes_2x2_avx2(x, y, idx, planes, h.in_size, W, Ho, Wo);
      return;
    }
#endif
    max_planes_2x2(x, y, idx, planes, h.in_size, W, Ho, Wo);
    return;
  }
  const M lowest = std::numeric_limits<M>::has_infinity ? -std::numeric_limits<M>::infinity()
                                                        : std::numeric_limits<M>::lowest();
  // Local copies of the tap tables: the stores to idx (int64_t) could alias the vectors' data.
  const int64_t *hs = h.start.data(), *hi = h.index.data(), *ws = w.start.data(), *wi = w.index.data();
  parallel_for(planes, resample::plane_grain(Ho * Wo * (taps + 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xp = x + p * HW;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const int64_t h0 = hs[oh], h1 = hs[oh + 1];
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const int64_t w0 = ws[ow], w1 = ws[ow + 1];
          // PyTorch's rule: start at -inf on the window's first position, take v when v > best
          // or v is NaN (so NaN propagates and ties keep the first maximum). Selects, not
          // branches: on real activations the comparison is a coin toss the CPU mispredicts.
          M best = lowest;
          int64_t at = h0 < h1 && w0 < w1 ? hi[h0] * W + wi[w0] : 0;
          for (int64_t a = h0; a < h1; ++a) {
            const int64_t row = hi[a] * W;
            for (int64_t c = w0; c < w1; ++c) {
              const int64_t i = row + wi[c];
              const M v = static_cast<M>(xp[i]);
              bool take = v > best;
              if constexpr (is_float_v<T>) take = take | (v != v);  // |, not ||: no branch
              best = select(take, v, best);
              at ^= (at ^ i) & -static_cast<int64_t>(take);
            }
          }
          const int64_t o = p * Ho * Wo + oh * Wo + ow;
          y[o] = static_cast<T>(best);
          idx[o] = at;
        }
      }
    }
  });
}

#define EMBER_INSTANTIATE_MAX_PLANES(T) \
  template void max_planes<T>(const T*, T*, int64_t*, int64_t, const AxisMap&, const AxisMap&);
EMBER_INSTANTIATE_MAX_PLANES(bool)
EMBER_INSTANTIATE_MAX_PLANES(uint8_t)
EMBER_INSTANTIATE_MAX_PLANES(int8_t)
EMBER_INSTANTIATE_MAX_PLANES(int16_t)
EMBER_INSTANTIATE_MAX_PLANES(int32_t)
EMBER_INSTANTIATE_MAX_PLANES(int64_t)
EMBER_INSTANTIATE_MAX_PLANES(Half)
EMBER_INSTANTIATE_MAX_PLANES(BFloat16)
EMBER_INSTANTIATE_MAX_PLANES(float)
EMBER_INSTANTIATE_MAX_PLANES(double)
#undef EMBER_INSTANTIATE_MAX_PLANES

}  // namespace ember::cpu
