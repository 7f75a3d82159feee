// Adam's fused CPU pass for dense float and double parameters: adam_element
// (core/ops/optim_math.h, the formula the CUDA kernels run too) over the parameter and its
// states in one sweep, eight or four lanes at a time in AVX2 registers. Apart from
// optim/adam.cpp (the optimizer, which decides when the pass applies) as DESIGN puts
// kernels, and SIMD, in core/cpu/.
#include "ember/core/cpu/adam.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

/// SIMD helpers of the fused step: T's lanes in one AVX2 register.
#if defined(__AVX2__)
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
  return _mm256_blendv_ps(b, a, _mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(a, b, _CMP_GT_OQ)));
}
inline __m256d vmaximum(__m256d a, __m256d b) {
  return _mm256_blendv_pd(b, a, _mm256_or_pd(_mm256_cmp_pd(a, a, _CMP_UNORD_Q), _mm256_cmp_pd(a, b, _CMP_GT_OQ)));
}

/// RoundedOps (core/ops/optim_math.h) on AVX2 registers: the same IEEE operations lane by
/// lane, so adam_element computes on each lane what it computes on a scalar.
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
#endif

template <bool Decay, bool L2, bool Ams, class T>
void adam_range(T* p, const T* g, T* m, T* v, T* vmax, int64_t b, int64_t e, const AdamScalars<T>& k) {
  int64_t i = b;
#if defined(__AVX2__)
  constexpr int64_t kLanes = 32 / sizeof(T);
  for (; i + kLanes <= e; i += kLanes) {
    auto pv = vload(p + i), mv = vload(m + i), vv = vload(v + i);
    auto xv = Ams ? vload(vmax + i) : mv;
    adam_element<Decay, L2, Ams>(pv, vload(g + i), mv, vv, xv, k, Avx2Ops{});
    vstore(p + i, pv);
    vstore(m + i, mv);
    vstore(v + i, vv);
    if constexpr (Ams) vstore(vmax + i, xv);
  }
#endif
  for (; i < e; ++i) {
    T pi = p[i], mi = m[i], vi = v[i], xi = Ams ? vmax[i] : T(0);
    adam_element<Decay, L2, Ams>(pi, g[i], mi, vi, xi, k, RoundedOps{});
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
    if constexpr (Ams) vmax[i] = xi;
  }
}

}  // namespace

/// The fused step over n elements, in parallel chunks.
template <class T>
void adam_fused(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamScalars<T>& k, bool has_decay,
                bool has_l2) {
  parallel_for(n, kGrainSize, [=, &k](int64_t b, int64_t e) {
    if (vmax) {
      if (has_decay) adam_range<true, false, true>(p, g, m, v, vmax, b, e, k);
      else if (has_l2) adam_range<false, true, true>(p, g, m, v, vmax, b, e, k);
      else adam_range<false, false, true>(p, g, m, v, vmax, b, e, k);
    } else {
      if (has_decay) adam_range<true, false, false>(p, g, m, v, vmax, b, e, k);
      else if (has_l2) adam_range<false, true, false>(p, g, m, v, vmax, b, e, k);
      else adam_range<false, false, false>(p, g, m, v, vmax, b, e, k);
    }
  });
}

template void adam_fused<float>(float*, const float*, float*, float*, float*, int64_t, const AdamScalars<float>&,
                                bool, bool);
template void adam_fused<double>(double*, const double*, double*, double*, double*, int64_t,
                                 const AdamScalars<double>&, bool, bool);

}  // namespace ember::cpu
