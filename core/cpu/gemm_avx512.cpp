// cpu::gemm's Eigen kernel for AVX-512 (F, DQ, VL, BW) with FMA, compiled with those -m flags
// on x86-64 (CMakeLists.txt) and run only where the CPU has them all (gemm_isa.h; the body is
// gemm_eigen.inc).
#include "ember/core/cpu/gemm_isa.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__AVX512BW__) && \
    defined(__FMA__)
// GCC 12 warns about _mm512_extractf64x4_pd's deliberately undefined operand (GCC bug
// 105593) wherever Eigen inlines it — "maybe" at -O3, "is used uninitialized" at -O1 (the
// sanitizer build): a false positive inside GCC's own header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define EMBER_EIGEN_NAMESPACE ember_eigen_avx512
#define EMBER_GEMM_KERNELS avx512_kernels
#include "ember/core/cpu/gemm_eigen.inc"
#else
// Built without the flags (not x86-64, or another compiler): no AVX-512 variant.
const ember::cpu::gemm_detail::Kernels* ember::cpu::gemm_detail::avx512_kernels() { return nullptr; }
#endif
