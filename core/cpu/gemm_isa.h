// Which instruction set cpu::gemm's products run on. ember's own GEMM (gemm.cpp: packing,
// cache blocking, threads) calls register-blocked micro-kernels that exist once per
// instruction set (gemm_kernel_avx2.cpp with the x86-64-v3 baseline, gemm_kernel_avx512.cpp
// and gemm_kernel_avx512_bf16.cpp compiled with their own -m flags); one is picked at run time.
//
// The choice: the environment variable EMBER_GEMM_ISA = avx2 | avx512 | avx512_bf16 when set
// (read once, at the first product; for an unknown or unavailable name ember says so on
// stderr and uses the default), else the widest this CPU runs: avx512_bf16 where it has
// AVX512_BF16 (and AVX-512), else avx512, else avx2. avx512_bf16 is avx512 for every dtype
// but BFloat16, whose products (but for matrix-vector ones) then multiply on vdpbf16ps:
// pairs of BFloat16 products added into float accumulators, denormals flushed (gemm_bf16.h).
// Otherwise Half/BFloat16 products compute in float on the float kernels, widening their
// operands while packing them. Either way they sum in float and round once when writing C.
// Integer products are plain loops and do not follow the choice. Whatever the choice, a
// product's result does not depend on the thread count.
#pragma once

#include <cstdint>

namespace ember::cpu {

enum class GemmIsa { kAvx2, kAvx512, kAvx512Bf16 };

/// "avx2", "avx512", "avx512_bf16" (the values of EMBER_GEMM_ISA).
const char* gemm_isa_name(GemmIsa isa);

/// Whether this build has a kernel for isa and this CPU (and OS) can run it.
bool gemm_isa_available(GemmIsa isa);

/// The instruction set products use now.
GemmIsa gemm_isa();

/// Switches every later product to isa (tests and benchmarks); throws if it is not
/// available. Call it while no product is running.
void set_gemm_isa(GemmIsa isa);

}  // namespace ember::cpu
