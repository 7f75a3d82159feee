// cpu::gemm's AVX2+FMA micro-kernels (gemm_kernel.h; the body is gemm_kernel.inc): 6 x 16
// floats or 6 x 8 doubles per micro-tile, 12 of the 16 ymm registers accumulating. Also the
// AVX-512 kernels' shapes emulated with pairs of ymm registers, for the tests. Compiled with
// -mavx2 -mfma (CMakeLists.txt; the x86-64-v3 baseline has them anyway), run only where the
// CPU has both (gemm_isa.h).
#include "ember/core/cpu/gemm_kernel.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace ember::cpu::gemm_detail {
namespace {
namespace avx2 {

struct VecF {
  using T = float;
  using V = __m256;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};

struct VecD {
  using T = double;
  using V = __m256d;
  static constexpr int W = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
};

// B micro-panel kc x 16 floats = 16 KiB in L1 (32 KiB); A block 144 x 256 floats = 144 KiB in L2.
constexpr int kMr = 6, kKcF = 256, kKcD = 256, kMc = 144;

#include "ember/core/cpu/gemm_kernel.inc"

}  // namespace avx2

namespace wide {  // AVX-512's shapes (gemm_kernel_avx512.cpp) on pairs of ymm registers

template <class Base>
struct Pair {
  using T = typename Base::T;
  struct V {
    typename Base::V lo, hi;
  };
  static constexpr int W = 2 * Base::W;
  static V zero() { return {Base::zero(), Base::zero()}; }
  static V load(const T* p) { return {Base::load(p), Base::load(p + Base::W)}; }
  static void store(T* p, V v) {
    Base::store(p, v.lo);
    Base::store(p + Base::W, v.hi);
  }
  static V set1(T x) { return {Base::set1(x), Base::set1(x)}; }
  static V mul(V a, V b) { return {Base::mul(a.lo, b.lo), Base::mul(a.hi, b.hi)}; }
  static V fma(V a, V b, V c) { return {Base::fma(a.lo, b.lo, c.lo), Base::fma(a.hi, b.hi, c.hi)}; }
};
using VecF = Pair<avx2::VecF>;
using VecD = Pair<avx2::VecD>;
constexpr int kMr = 12, kKcF = 192, kKcD = 192, kMc = 144;  // as gemm_kernel_avx512.cpp

#include "ember/core/cpu/gemm_kernel.inc"

}  // namespace wide
}  // namespace

const Kernels* avx2_kernels() { return avx2::kernels(); }
const Kernels* avx2_wide_kernels() { return wide::kernels(); }

}  // namespace ember::cpu::gemm_detail

#else
// Built without the flags (not x86-64, or another compiler): no AVX2 variant.
const ember::cpu::gemm_detail::Kernels* ember::cpu::gemm_detail::avx2_kernels() { return nullptr; }
const ember::cpu::gemm_detail::Kernels* ember::cpu::gemm_detail::avx2_wide_kernels() { return nullptr; }
#endif
