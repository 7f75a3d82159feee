// RoundedOps (core/ops/optim_math.h) on AVX2 registers, so the optimizers' per-element functors
// (adam_element, sgd_element) run on a register of lanes exactly as on one scalar: each lane
// sees the same IEEE operations in the same order. Used by the fused CPU passes core/cpu/adam.cpp
// and core/cpu/sgd.cpp; empty without AVX2 (the passes then run their scalar loops).
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace ember::cpu {

#if defined(__AVX2__)
/// T's lanes in one AVX2 register.
inline __m256 vload(const float* p) { return _mm256_loadu_ps(p); }
inline __m256d vload(const double* p) { return _mm256_loadu_pd(p); }
inline void vstore(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
inline void vstore(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
inline __m256 vset(float v) { return _mm256_set1_ps(v); }
inline __m256d vset(double v) { return _mm256_set1_pd(v); }
inline __m256 vmul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
inline __m256d vmul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
inline __m256 vdiv(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
inline __m256d vdiv(__m256d a, __m256d b) { return _mm256_div_pd(a, b); }
inline __m256 vadd(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
inline __m256d vadd(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
inline __m256 vfma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
inline __m256d vfma(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
inline __m256 vsqrt(__m256 a) { return _mm256_sqrt_ps(a); }
inline __m256d vsqrt(__m256d a) { return _mm256_sqrt_pd(a); }
/// maximum(a, b) with NaN winning: a where a is NaN or a > b, else b.
inline __m256 vmaximum(__m256 a, __m256 b) {
  return _mm256_blendv_ps(b, a,
                          _mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(a, b, _CMP_GT_OQ)));
}
inline __m256d vmaximum(__m256d a, __m256d b) {
  return _mm256_blendv_pd(b, a,
                          _mm256_or_pd(_mm256_cmp_pd(a, a, _CMP_UNORD_Q), _mm256_cmp_pd(a, b, _CMP_GT_OQ)));
}

/// RoundedOps on AVX2 registers: the same IEEE operations lane by lane.
struct Avx2Ops {
  template <class T>
  static auto set(T x) {
    return vset(x);
  }
  static auto mul(auto a, auto b) { return vmul(a, b); }
  static auto div(auto a, auto b) { return vdiv(a, b); }
  static auto add(auto a, auto b) { return vadd(a, b); }
  static auto fma(auto a, auto b, auto c) { return vfma(a, b, c); }
  static auto sqrt(auto a) { return vsqrt(a); }
  static auto maximum(auto a, auto b) { return vmaximum(a, b); }
};

/// T's lanes per AVX2 register.
template <class T>
constexpr int64_t kAvx2Lanes = 32 / static_cast<int64_t>(sizeof(T));
#endif

}  // namespace ember::cpu
