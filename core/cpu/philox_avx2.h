// philox8_avx2: eight Philox-4x32-10 blocks at once, the rounds of philox::philox4x32_10
// (core/philox.h) on eight AVX2 lanes. Used where many random words are drawn in a row:
// bernoulli_ (core/cpu/random.cpp) and the fused attention's dropout (core/cpu/attention.cpp);
// their tests hold it to the scalar function bit for bit.
#pragma once

#if defined(__AVX2__)
#include <immintrin.h>

#include <cstdint>

namespace ember::cpu {

/// Words of the blocks for counters counter .. counter + 7 under `key`: lane b of out[w] is
/// word w of block counter + b. The eight counters share their high word, so the caller makes
/// sure the low word does not wrap (static_cast<uint32_t>(counter) <= 0xFFFFFFFF - 7).
inline void philox8_avx2(uint64_t key, uint64_t counter, __m256i out[4]) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(counter))),
                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i c1 = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(counter >> 32)));
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    // 32x32 -> 64-bit products: low words by mullo, high words from the even and odd lanes.
    __m256i pe0 = _mm256_mul_epu32(c0, m0), po0 = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
    __m256i pe1 = _mm256_mul_epu32(c2, m1), po1 = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
    __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(pe0, 32), po0, 0xAA);
    __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(pe1, 32), po1, 0xAA);
    __m256i lo0 = _mm256_mullo_epi32(c0, m0), lo1 = _mm256_mullo_epi32(c2, m1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

}  // namespace ember::cpu
#endif
