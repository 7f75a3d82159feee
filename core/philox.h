// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), the
// counter-based generator behind every random number ember draws, and the maps from its words
// to samples. Header-only and compiled for both host and CUDA device code (EMBER_HOST_DEVICE),
// so the CPU loops and the CUDA kernels share one definition: for the same (seed, offset) they
// draw the same numbers, and the round function is unit-tested on the CPU.
//
// A draw of n elements reserves n blocks of its device's Generator; element k uses block
// (offset + k) under key = seed, whatever the thread count or launch configuration.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/core/host_device.h"

namespace ember {
struct Half;
struct BFloat16;
}  // namespace ember

namespace ember::philox {

/// The full Philox-4x32-10 bijection: a 128-bit counter and a 64-bit key to 128 random bits.
EMBER_HOST_DEVICE inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; ++r) {
    // 32x32 -> 64-bit products: one mul.wide on the GPU, one imul on x86-64.
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/// Four uniformly distributed 32-bit words for (key, counter): the counter's high 64 bits are 0.
EMBER_HOST_DEVICE inline void block(uint64_t key, uint64_t counter, uint32_t out[4]) {
  const uint32_t ctr[4] = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u};
  const uint32_t k[2] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  philox4x32_10(ctr, k, out);
}

/// A float in [0, 1) from 24 random bits, a double from 53.
EMBER_HOST_DEVICE inline float to_float01(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
EMBER_HOST_DEVICE inline double to_double01(uint32_t hi, uint32_t lo) {
  uint64_t v = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(v & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

/// 64 random bits of block (key, counter): its first two words.
EMBER_HOST_DEVICE inline uint64_t bits64(uint64_t key, uint64_t counter) {
  uint32_t w[4];
  block(key, counter, w);
  return (static_cast<uint64_t>(w[0]) << 32) | w[1];
}

/// Uniform double in [0, 1) with 53 random bits.
EMBER_HOST_DEVICE inline double uniform01(uint64_t key, uint64_t counter) {
  uint32_t w[4];
  block(key, counter, w);
  return to_double01(w[0], w[1]);
}

/// Uniform in [0, 1) on the grid k / 2^digits, digits = the mantissa bits of the target type
/// (53 double, 24 float, 11 half, 8 bfloat16), as PyTorch's uniform_real_distribution: a 53-bit
/// double rounded to float could otherwise land on 1.0. Exact in double.
EMBER_HOST_DEVICE inline double uniform01_grid(uint64_t key, uint64_t counter, int digits) {
  return static_cast<double>(bits64(key, counter) >> (64 - digits)) / static_cast<double>(uint64_t{1} << digits);
}

/// The digits of uniform01_grid for an element type: its mantissa bits (with the implicit one).
template <class T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else return 8;  // BFloat16
}

/// a * b + c with the product rounded before the sum. Device code would otherwise fuse it into
/// one FMA (nvcc contracts by default) and differ from the host in the last bit.
EMBER_HOST_DEVICE inline double mul_add(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(__dmul_rn(a, b), c);
#else
  return a * b + c;
#endif
}

/// Standard normal by Box-Muller from one block (both uniforms from its four words). The host
/// and device libm's log1p and cos may differ in the last bit of a double, so normal samples
/// agree across devices to a few ulp of double rather than exactly.
EMBER_HOST_DEVICE inline double normal01(uint64_t key, uint64_t counter) {
  constexpr double kTwoPi = 2.0 * 3.141592653589793;  // exact: doubling pi only moves the exponent
  uint32_t w[4];
  block(key, counter, w);
  double u1 = to_double01(w[0], w[1]), u2 = to_double01(w[2], w[3]);
  return ::sqrt(-2.0 * ::log1p(-u1)) * ::cos(kTwoPi * u2);
}

}  // namespace ember::philox
