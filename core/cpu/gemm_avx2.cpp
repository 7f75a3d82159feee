// cpu::gemm's Eigen kernel for AVX2+FMA, compiled with -mavx2 -mfma on x86-64 (CMakeLists.txt)
// and run only where the CPU has both (gemm_isa.h; the body is gemm_eigen.inc).
#include "ember/core/cpu/gemm_isa.h"

#if defined(__AVX2__) && defined(__FMA__)
#define EMBER_EIGEN_NAMESPACE ember_eigen_avx2
#define EMBER_GEMM_KERNELS avx2_kernels
#include "ember/core/cpu/gemm_eigen.inc"
#else
// Built without the flags (not x86-64, or another compiler): no AVX2 variant.
const ember::cpu::gemm_detail::Kernels* ember::cpu::gemm_detail::avx2_kernels() { return nullptr; }
#endif
