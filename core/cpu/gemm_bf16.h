// cpu::gemm's BFloat16 product on vdpbf16ps (AVX512_BF16; gemm_kernel_avx512_bf16.cpp): the
// layout of its packed panels and a scalar emulation of what the instruction computes, in
// plain C++ so that gemm_16bit.cpp's driver and the tests can run them on any CPU.
//
// vdpbf16ps multiplies pairs of BFloat16 along k: lane j of the instruction takes the 32-bit
// word j of each source, two BFloat16 side by side (element 2j in the low half, 2j + 1 in
// the high half), and adds both products to the float accumulator j. Hence the layout: a
// panel of R lines (rows of op(A), or columns of op(B)) stores, for each pair q of depth
// indices (2q, 2q + 1), one 32-bit word per line, word q * R + l = x(l, 2q) | x(l, 2q + 1) << 16.
// An odd depth pads its last pair with +0 (in both operands, so the padded product is 0 * 0).
//
// Intel's description of the instruction (SDM, VDPBF16PS): per lane,
//   acc += make_fp32(src1.hi) * make_fp32(src2.hi);   then
//   acc += make_fp32(src1.lo) * make_fp32(src2.lo);
// each step a fused multiply-add rounded to nearest even, input denormals treated as zero,
// output denormals flushed to zero, MXCSR neither read nor written. dpbf16_lane does that in
// float with std::fma. (Tininess here is judged on the result rounded with subnormal
// precision, which can differ from the hardware's for sums within 2^-150 of FLT_MIN; no
// product of ordinary magnitudes goes there.)
//
// The product this path defines: S(i, j) = the chain of dpbf16_lane over the pairs q =
// 0, 1, ... of row i of op(A) and column j of op(B), from +0, one chain however the product is
// blocked or split over threads; then C(i, j) = bf16(alpha S) (beta == 0, C not read) or
// bf16(fma(alpha, S, beta C)): one rounding to BFloat16 (dpbf16_finish).
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/core/half.h"

namespace ember::cpu::gemm_bf16 {

/// The float a BFloat16 stands for, from the low or the high half of a pair word.
inline float pair_lo(uint32_t w) { return detail::bits_float(w << 16); }
inline float pair_hi(uint32_t w) { return detail::bits_float(w & 0xffff0000u); }

/// Denormals to zero of the same sign (the instruction's inputs and outputs).
inline float flush_denormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

/// One step of the instruction: acc + a * b fused, denormals in and out flushed.
inline float dp_step(float acc, float a, float b) {
  return flush_denormal(std::fma(flush_denormal(a), flush_denormal(b), flush_denormal(acc)));
}

/// One lane of vdpbf16ps: acc plus the products of the pair words a and b, high halves first.
inline float dpbf16_lane(float acc, uint32_t a, uint32_t b) {
  acc = dp_step(acc, pair_hi(a), pair_hi(b));
  return dp_step(acc, pair_lo(a), pair_lo(b));
}

/// The pair word of two BFloat16 (lo at the even depth index).
inline uint32_t make_pair(BFloat16 lo, BFloat16 hi) { return uint32_t{lo.x} | uint32_t{hi.x} << 16; }

/// Number of pair words along a depth of kc.
inline int64_t pair_count(int64_t kc) { return (kc + 1) / 2; }

/// The packed layout: dst[q * R + l] for q < pair_count(kc), l < R, is the pair
/// (x(l, 2q), x(l, 2q + 1)) with x(l, p) = src[l * line_stride + p * depth_stride] for l < h
/// and p < kc, and +0 elsewhere (lines h..R-1 of an edge panel, the pad of an odd depth).
inline void pack_pairs(const BFloat16* src, int64_t line_stride, int64_t depth_stride, int64_t h, int R, int64_t kc,
                       uint32_t* dst) {
  const int64_t kp = pair_count(kc);
  for (int64_t q = 0; q < kp; ++q)
    for (int l = 0; l < R; ++l) {
      if (l >= h) {
        dst[q * R + l] = 0;
        continue;
      }
      const BFloat16* x = src + l * line_stride + 2 * q * depth_stride;
      const BFloat16 hi = 2 * q + 1 < kc ? x[depth_stride] : BFloat16::from_bits(0);
      dst[q * R + l] = make_pair(x[0], hi);
    }
}

/// What the vdpbf16ps micro-kernel computes on an mr x nr tile: a packed A panel (mr lines)
/// and B panel (nr lines), kp pair words deep, into c[i * ldc + j], starting from c itself
/// (accumulate) or from +0.
inline void emulated_tile(int mr, int nr, int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc,
                          bool accumulate) {
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      float acc = accumulate ? c[i * ldc + j] : 0.0f;
      for (int64_t q = 0; q < kp; ++q) acc = dpbf16_lane(acc, a[q * mr + i], b[q * nr + j]);
      c[i * ldc + j] = acc;
    }
}

/// S of one element straight from the definition: the chain over x(p) = x[p * xs] and
/// y(p) = y[p * ys], p < k, in pairs (the tests' bitwise oracle).
inline float dot_chain(const BFloat16* x, int64_t xs, const BFloat16* y, int64_t ys, int64_t k) {
  float acc = 0.0f;
  const BFloat16 zero = BFloat16::from_bits(0);
  for (int64_t p = 0; p < k; p += 2) {
    const bool has_hi = p + 1 < k;
    acc = dpbf16_lane(acc, make_pair(x[p * xs], has_hi ? x[(p + 1) * xs] : zero),
                      make_pair(y[p * ys], has_hi ? y[(p + 1) * ys] : zero));
  }
  return acc;
}

/// C's element from S: one rounding to BFloat16, beta == 0 not reading C (NaNs there vanish).
inline BFloat16 dpbf16_finish(float s, float alpha, float beta, BFloat16 c) {
  return BFloat16(beta == 0.0f ? alpha * s : std::fma(alpha, s, beta * static_cast<float>(c)));
}

}  // namespace ember::cpu::gemm_bf16
