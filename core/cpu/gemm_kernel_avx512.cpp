// cpu::gemm's AVX-512 micro-kernels (gemm_kernel.h; the body is gemm_kernel.inc): 12 x 32
// floats or 12 x 16 doubles per micro-tile, 24 of the 32 zmm registers accumulating.
// Compiled with -mavx512f (and friends) on x86-64 (CMakeLists.txt), run only where the CPU
// has them (gemm_isa.h). Nothing else of ember is included: see gemm_kernel.h.
#include "ember/core/cpu/gemm_kernel.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__AVX512BW__) && \
    defined(__FMA__)
#include <immintrin.h>

namespace ember::cpu::gemm_detail {
namespace {
namespace avx512 {

struct VecF {
  using T = float;
  using V = __m512;
  static constexpr int W = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(T x) { return _mm512_set1_ps(x); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};

struct VecD {
  using T = double;
  using V = __m512d;
  static constexpr int W = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V set1(T x) { return _mm512_set1_pd(x); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
};

// B micro-panel 192 x 32 floats = 24 KiB in L1 (32 KiB); A block 144 x 192 floats in L2.
constexpr int kMr = 12, kKcF = 192, kKcD = 192, kMc = 144;

#include "ember/core/cpu/gemm_kernel.inc"

}  // namespace avx512
}  // namespace

const Kernels* avx512_kernels() { return avx512::kernels(); }

}  // namespace ember::cpu::gemm_detail

#else
// Built without the flags (not x86-64, or another compiler): no AVX-512 variant.
const ember::cpu::gemm_detail::Kernels* ember::cpu::gemm_detail::avx512_kernels() { return nullptr; }
#endif
