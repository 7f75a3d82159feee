// machine_peak: the ceilings bench/compare.py sets ember's numbers against. Measures the
// machine's fp32 FMA peak (independent FMA chains, AVX-512 where the CPU has it, else AVX2) with
// 1 and N threads, and its memory bandwidth as STREAM's triad (a = b + s * c, fp32, arrays far
// larger than the last-level cache; bytes counted as STREAM does: 3 arrays per pass).
//
//   build-bench/bench/machine_peak                 # N = OMP_NUM_THREADS, else all cores
//   build-bench/bench/machine_peak --threads 2 --json
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "machine_peak_fma.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

volatile float g_sink;  // keeps the kernels' results alive

struct FmaKernel {
  const char* isa;
  float (*run)(long);
  long flops_per_round;
};

FmaKernel pick_fma_kernel(bool force_avx2) {
  __builtin_cpu_init();
  if (!force_avx2 && __builtin_cpu_supports("avx512f"))
    return {"avx512", machine_peak::fma_chains_avx512, machine_peak::fma_flops_per_round_avx512};
  return {"avx2", machine_peak::fma_chains_avx2, machine_peak::fma_flops_per_round_avx2};
}

/// GFLOP/s of `threads` threads each running the FMA chains for about `seconds`: best of
/// `repetitions` (a peak is the least disturbed run).
double fma_gflops(const FmaKernel& k, int threads, double seconds, int repetitions) {
  // Calibrate the rounds on one thread: a short run, scaled to the wanted time.
  long rounds = 1 << 16;
  for (;;) {
    auto start = Clock::now();
    g_sink = k.run(rounds);
    double t = seconds_since(start);
    if (t > 0.02) {
      rounds = static_cast<long>(rounds * seconds / t) + 1;
      break;
    }
    rounds *= 4;
  }
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    auto start = Clock::now();
#pragma omp parallel num_threads(threads)
    g_sink = k.run(rounds);
    double t = seconds_since(start);
    best = std::max(best, static_cast<double>(rounds) * k.flops_per_round * threads / t / 1e9);
  }
  return best;
}

/// STREAM triad a[i] = b[i] + s * c[i] over n floats per array, GB/s (3 * 4 * n bytes per pass,
/// STREAM's count), best of `repetitions`. Arrays are first touched by the threads that use
/// them (same static schedule).
double triad_gbs(int64_t n, int threads, int repetitions) {
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  float* pa = a.get();
  float* pb = b.get();
  float* pc = c.get();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) {
    pa[i] = 0.0f;
    pb[i] = 1.0f;
    pc[i] = 2.0f;
  }
  const float s = 3.0f;
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    auto start = Clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    double t = seconds_since(start);
    best = std::max(best, 3.0 * sizeof(float) * static_cast<double>(n) / t / 1e9);
  }
  g_sink = pa[n / 2];
  return best;
}

struct Options {
  int threads = 0;
  int64_t triad_mib = 128;  // per array: 3 x 128 MiB, far beyond any L3 on these machines
  bool json = false;
  bool force_avx2 = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
    } else if (a == "--avx2") {
      o.force_avx2 = true;
    } else if (a == "--threads" && i + 1 < argc) {
      o.threads = std::atoi(argv[++i]);
    } else if (a == "--triad-mib" && i + 1 < argc) {
      o.triad_mib = std::atoll(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: machine_peak [--threads N] [--triad-mib MIB_PER_ARRAY] [--avx2] [--json]\n"
          "  N defaults to OMP_NUM_THREADS, else all cores; --avx2 skips AVX-512 even where present\n");
      std::exit(a == "-h" || a == "--help" ? 0 : 2);
    }
  }
  if (o.threads <= 0) o.threads = omp_get_max_threads();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  FmaKernel k = pick_fma_kernel(o.force_avx2);
  const int64_t n = o.triad_mib * (int64_t{1} << 20) / static_cast<int64_t>(sizeof(float));
  double fma1 = fma_gflops(k, 1, 0.2, 5), fman = fma_gflops(k, o.threads, 0.2, 5);
  double triad1 = triad_gbs(n, 1, 10), triadn = triad_gbs(n, o.threads, 10);
  if (o.json) {
    std::printf(
        "{\"isa\": \"%s\", \"threads\": %d, \"fma_gflops_1\": %.1f, \"fma_gflops_n\": %.1f, "
        "\"triad_gbs_1\": %.2f, \"triad_gbs_n\": %.2f, \"triad_mib_per_array\": %lld}\n",
        k.isa, o.threads, fma1, fman, triad1, triadn, static_cast<long long>(o.triad_mib));
  } else {
    std::printf("fp32 FMA peak (%s): %.1f GFLOP/s with 1 thread, %.1f with %d\n", k.isa, fma1, fman,
                o.threads);
    std::printf("STREAM triad (fp32, 3 x %lld MiB): %.2f GB/s with 1 thread, %.2f with %d\n",
                static_cast<long long>(o.triad_mib), triad1, triadn, o.threads);
  }
  return 0;
}
