// machine_peak's AVX2 FMA kernel: 12 chains of 8-float FMAs (12 of the 16 ymm registers), enough
// for 2 FMA ports with a 4-5 cycle latency. Compiled with -mavx2 -mfma (bench/CMakeLists.txt).
#include <immintrin.h>

#include "machine_peak_fma.h"

namespace machine_peak {

namespace {
constexpr int kChains = 12;
}

const long fma_flops_per_round_avx2 = kChains * 8 * 2;

float fma_chains_avx2(long iterations) {
  // acc * m + a converges to a / (1 - m) = 1: no overflow, no denormals, whatever the count.
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-6f);
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);
}

}  // namespace machine_peak
