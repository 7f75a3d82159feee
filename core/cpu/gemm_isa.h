// Which instruction set cpu::gemm's float and double products run on. ember's own GEMM
// (gemm.cpp: packing, cache blocking, threads) calls register-blocked micro-kernels that
// exist once per instruction set (gemm_kernel_avx2.cpp with the x86-64-v3 baseline,
// gemm_kernel_avx512.cpp compiled with its own -m flags); one is picked at run time.
//
// The choice: the environment variable EMBER_GEMM_ISA = avx2 | avx512 when set (read once,
// at the first product; for an unknown or unavailable name ember says so on stderr and uses
// the default), else AVX-512 where the CPU has it, else AVX2. Half/BFloat16 products compute
// in float and follow it; integer products are plain loops and do not. Whatever the choice,
// a product's result does not depend on the thread count.
#pragma once

#include <cstdint>

namespace ember::cpu {

enum class GemmIsa { kAvx2, kAvx512 };

/// "avx2", "avx512" (the values of EMBER_GEMM_ISA).
const char* gemm_isa_name(GemmIsa isa);

/// Whether this build has a kernel for isa and this CPU (and OS) can run it.
bool gemm_isa_available(GemmIsa isa);

/// The instruction set products use now.
GemmIsa gemm_isa();

/// Switches every later product to isa (tests and benchmarks); throws if it is not
/// available. Call it while no product is running.
void set_gemm_isa(GemmIsa isa);

}  // namespace ember::cpu
