// The FMA-chain kernels of machine_peak.cpp, one per instruction set, each compiled in its own
// file with its own -m flags (bench/CMakeLists.txt) and chosen at run time.
#pragma once

namespace machine_peak {

// Runs `iterations` rounds of independent FMA chains (acc = acc * m + a, enough chains to
// cover the FMA latency on every FMA port) and returns a value the caller must keep, so the
// work is not optimised away. Floating-point operations done: iterations * fma_flops_per_round_*.
float fma_chains_avx2(long iterations);
float fma_chains_avx512(long iterations);
extern const long fma_flops_per_round_avx2;
extern const long fma_flops_per_round_avx512;

}  // namespace machine_peak
