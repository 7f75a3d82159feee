// machine_peak's AVX-512 FMA kernel: 24 chains of 16-float FMAs (24 of the 32 zmm registers),
// enough for 2 FMA ports with a 4-6 cycle latency. Compiled with -mavx512f (bench/CMakeLists.txt)
// and run only where the CPU has AVX-512F.
#include <immintrin.h>

#include "machine_peak_fma.h"

namespace machine_peak {

namespace {
constexpr int kChains = 24;
}

const long fma_flops_per_round_avx512 = kChains * 16 * 2;

float fma_chains_avx512(long iterations) {
  // acc * m + a converges to a / (1 - m) = 1: no overflow, no denormals, whatever the count.
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-6f);
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  // (Not _mm512_reduce_add_ps: GCC 12 warns inside it, -Wuninitialized on its own temporary.)
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

}  // namespace machine_peak
