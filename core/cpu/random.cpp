// The vectorised CPU sampler of bernoulli_ with a scalar p (and of dropout's masks through
// it): eight Philox blocks at a time in AVX2 registers (philox_avx2.h). Apart from
// core/ops/random.cpp, which reserves the generator's blocks and calls it, as DESIGN puts
// kernels, and SIMD, in core/cpu/.
#include "ember/core/cpu/random.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/cpu/philox_avx2.h"
#include "ember/core/philox.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

// ---- bernoulli with a scalar p, vectorized -------------------------------------------------
//
// Element k is 1 iff philox::uniform01(key, start + k) < p, exactly as the scalar sampler and
// the CUDA kernel decide it: uniform01 is v / 2^53 with v = (w0 << 21) | (w1 >> 11) from the
// block's first two words, so u < p iff v < T = ceil(p 2^53), i.e. iff (w0, w1 >> 11) is
// below (T >> 21, T & (2^21 - 1)) in lexicographic order. Eight blocks at a time with AVX2.

/// The 53-bit threshold of p in (0, 1) split into the part compared with w0 and with w1 >> 11.
struct BernoulliThreshold {
  uint32_t hi, lo;
  explicit BernoulliThreshold(double p) {
    uint64_t t = static_cast<uint64_t>(std::ceil(p * 9007199254740992.0));  // p 2^53, exact
    hi = static_cast<uint32_t>(t >> 21);
    lo = static_cast<uint32_t>(t & ((uint64_t{1} << 21) - 1));
  }
  bool keep(uint32_t w0, uint32_t w1) const { return w0 < hi || (w0 == hi && (w1 >> 11) < lo); }
};

/// bit i of the result: whether element k + i (i < 8) is 1; `n` <= 8 elements.
uint32_t bernoulli_bits8(uint64_t key, uint64_t counter, const BernoulliThreshold& th, int n) {
#if defined(__AVX2__)
  if (n == 8 && static_cast<uint32_t>(counter) <= 0xFFFFFFFFu - 7) {
    __m256i words[4];  // the eight counters share their high word (checked above)
    cpu::philox8_avx2(key, counter, words);
    const __m256i c0 = words[0], c1 = words[1];
    // Unsigned w0 < hi by flipping the sign bits; w1 >> 11 fits a positive int32.
    const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
    __m256i w0 = _mm256_xor_si256(c0, sign);
    __m256i hi = _mm256_set1_epi32(static_cast<int>(th.hi ^ 0x80000000u));
    __m256i lt = _mm256_cmpgt_epi32(hi, w0);
    __m256i eq = _mm256_cmpeq_epi32(hi, w0);
    __m256i lo_lt = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(th.lo)), _mm256_srli_epi32(c1, 11));
    __m256i keep = _mm256_or_si256(lt, _mm256_and_si256(eq, lo_lt));
    return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(keep)));
  }
#endif
  uint32_t bits = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t w[4];
    philox::block(key, counter + static_cast<uint64_t>(i), w);
    bits |= static_cast<uint32_t>(th.keep(w[0], w[1])) << i;
  }
  return bits;
}

}  // namespace

/// out[k] = (uniform01(key, start + k) < p) ? on : 0 for k < n, p in (0, 1).
template <class T>
void fill_bernoulli(T* out, int64_t n, uint64_t key, uint64_t start, double p, T on) {
  const BernoulliThreshold th(p);
  parallel_for(n, 8192, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; k += 8) {
      int m = static_cast<int>(std::min<int64_t>(8, e - k));
      uint32_t bits = bernoulli_bits8(key, start + static_cast<uint64_t>(k), th, m);
      T* o = out + k;
      if constexpr (std::is_same_v<T, float>) {
#if defined(__AVX2__)
        if (m == 8) {
          __m256i lanes = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)),
                                           _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128));
          __m256i mask = _mm256_cmpeq_epi32(lanes, _mm256_setzero_si256());
          _mm256_storeu_ps(o, _mm256_andnot_ps(_mm256_castsi256_ps(mask), _mm256_set1_ps(on)));
          continue;
        }
#endif
      }
      for (int i = 0; i < m; ++i) o[i] = ((bits >> i) & 1u) ? on : T(0);
    }
  });
}

template void fill_bernoulli<float>(float*, int64_t, uint64_t, uint64_t, double, float);
template void fill_bernoulli<double>(double*, int64_t, uint64_t, uint64_t, double, double);

}  // namespace ember::cpu
