// cpu::gemm's BFloat16 micro-kernel on vdpbf16ps (gemm_kernel.h, Bf16MicroKernel): 12 x 32
// floats per micro-tile, 24 of the 32 zmm registers accumulating, each step taking one pair
// word of A (broadcast) and two B vectors of 16 pair words (the layout: gemm_bf16.h).
// Compiled with -mavx512f -mavx512bf16 on x86-64 (CMakeLists.txt), run only where the CPU
// has AVX512_BF16 (gemm_isa.h). Nothing else of ember is included: see gemm_kernel.h.
#include "ember/core/cpu/gemm_kernel.h"

#if defined(__AVX512F__) && defined(__AVX512BF16__)
#include <immintrin.h>

namespace ember::cpu::gemm_detail {
namespace {
namespace avx512_bf16 {

constexpr int kMr = 12, kNr = 32;
// B micro-panel: 192 pair words x 32 columns = 24 KiB in L1; A block 144 x 384 BFloat16 in L2.
constexpr int kKc = 384, kMc = 144;

void tile(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, bool accumulate) {
  __m512 acc0[kMr], acc1[kMr];
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) {
    acc0[i] = accumulate ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
    acc1[i] = accumulate ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
  }
#pragma GCC unroll 2
  for (int64_t q = 0; q < kp; ++q) {
    // The vector types: __m512bh is a vector of 32 BFloat16 (GCC 12: of short; later: __bf16).
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 12
    for (int i = 0; i < kMr; ++i) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[i]));
      acc0[i] = _mm512_dpbf16_ps(acc0[i], av, b0);
      acc1[i] = _mm512_dpbf16_ps(acc1[i], av, b1);
    }
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) {
    _mm512_storeu_ps(c + i * ldc, acc0[i]);
    _mm512_storeu_ps(c + i * ldc + 16, acc1[i]);
  }
}

}  // namespace avx512_bf16
}  // namespace

const Bf16Kernels* avx512_bf16_kernels() {
  static const Bf16Kernels k{avx512_bf16::kMr, avx512_bf16::kNr, avx512_bf16::kKc, avx512_bf16::kMc,
                             &avx512_bf16::tile};
  return &k;
}

}  // namespace ember::cpu::gemm_detail

#else
// Built without the flags (not x86-64, or a compiler without AVX512_BF16): no such kernel.
const ember::cpu::gemm_detail::Bf16Kernels* ember::cpu::gemm_detail::avx512_bf16_kernels() { return nullptr; }
#endif
