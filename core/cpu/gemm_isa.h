// Which instruction set cpu::gemm's float and double products run on. ember is compiled
// for plain x86-64, but Eigen's product kernel is about 2.5x faster with AVX2+FMA, so it
// is compiled once per instruction set (gemm_generic.cpp, gemm_avx2.cpp, gemm_avx512.cpp,
// the latter two with their -m flags, each in its own renamed Eigen namespace so that the
// linker cannot merge their template instances) and picked at run time.
//
// The choice: the environment variable EMBER_GEMM_ISA = generic | avx2 | avx512 when set
// (read once, at the first product; for an unknown or unavailable name ember says so on
// stderr and uses the default), else AVX2 where the CPU has it (AVX-512 measured no faster;
// gemm.cpp), else generic. Half/BFloat16 products compute in float and follow it; integer
// products are plain loops and do not.
#pragma once

#include <cstdint>

namespace ember::cpu {

enum class GemmIsa { kGeneric, kAvx2, kAvx512 };

/// "generic", "avx2", "avx512" (the values of EMBER_GEMM_ISA).
const char* gemm_isa_name(GemmIsa isa);

/// Whether this build has a kernel for isa and this CPU (and OS) can run it.
bool gemm_isa_available(GemmIsa isa);

/// The instruction set products use now.
GemmIsa gemm_isa();

/// Switches every later product to isa (tests and benchmarks); throws if it is not
/// available. Call it while no product is running.
void set_gemm_isa(GemmIsa isa);

namespace gemm_detail {

/// One Eigen product on the calling thread with gemm's contract (C = alpha op(A) op(B) +
/// beta C, row-major, beta == 0 overwrites C), m, n > 0.
template <class T>
using EigenGemm = void (*)(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                           int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

struct Kernels {
  EigenGemm<float> f32;
  EigenGemm<double> f64;
};

/// Each translation unit's kernels; nullptr when the build compiled it without its
/// instruction set (not x86-64, or a compiler without the flags).
const Kernels* generic_kernels();
const Kernels* avx2_kernels();
const Kernels* avx512_kernels();

}  // namespace gemm_detail
}  // namespace ember::cpu
