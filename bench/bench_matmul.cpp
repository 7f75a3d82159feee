// float32 matmul. The canonical benchmarks (bench/README.md, compared with PyTorch's torch.mm
// by the harness): matmul/<n> = (n x n) @ (n x n) for n = 64 ... 2048, and
// matmul/4096x1024x256 = (4096 x 1024) @ (1024 x 256); inputs uniform [0, 1) (ember::rand),
// the output allocated each iteration, threads from OMP_NUM_THREADS. The FLOP counter counts
// 2 m n k floating-point operations per product, as a rate (the column reads FLOP=x/s).
// Also: the same squares with an explicit thread count (threads:1/2), the small and
// transposed products of a CNN and an MLP (matmul_shape/...), and squares in each floating
// dtype (matmul_dtype/<float32|bfloat16|float16>/<n>: Half and BFloat16 multiply in float,
// gemm_isa.h), set against torch.mm on the same dtypes.
#include <benchmark/benchmark.h>

#include <string>

#include <ember/ember.h>

namespace {

void set_flops(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["FLOP"] = benchmark::Counter(2.0 * static_cast<double>(m) * static_cast<double>(n) *
                                                  static_cast<double>(k),
                                              benchmark::Counter::kIsIterationInvariantRate);
}

/// (m x k) @ (k x n); ta / tb: the operand is the transpose of a contiguous matrix (a view).
void run_matmul(benchmark::State& state, int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false) {
  ember::Tensor a = ta ? ember::rand({k, m}).t() : ember::rand({m, k});
  ember::Tensor b = tb ? ember::rand({n, k}).t() : ember::rand({k, n});
  for (auto _ : state) {
    ember::Tensor c = ember::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, m, n, k);
}

// Canonical names: the thread count comes from OMP_NUM_THREADS.
[[maybe_unused]] const bool registered = [] {
  for (int64_t n : {64, 128, 256, 512, 1024, 2048})
    benchmark::RegisterBenchmark(("matmul/" + std::to_string(n)).c_str(),
                                 [n](benchmark::State& s) { run_matmul(s, n, n, n); })
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  benchmark::RegisterBenchmark("matmul/4096x1024x256",
                               [](benchmark::State& s) { run_matmul(s, 4096, 256, 1024); })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  // Shapes of the CNN (conv as im2col products) and the MLP (784-512 layer, batch 128:
  // forward x W^T, backward grad_x = g W and grad_W = g^T x).
  struct Shape {
    const char* name;
    int64_t m, n, k;
    bool ta, tb;
  };
  for (Shape sh : {Shape{"matmul_shape/conv_64x288x196", 64, 196, 288, false, false},
                   Shape{"matmul_shape/conv_32x784x9", 32, 9, 784, false, false},
                   Shape{"matmul_shape/mlp_fwd_128x784x512_tb", 128, 512, 784, false, true},
                   Shape{"matmul_shape/mlp_dx_128x512x784", 128, 784, 512, false, false},
                   Shape{"matmul_shape/mlp_dw_512x128x784_ta", 512, 784, 128, true, false}})
    benchmark::RegisterBenchmark(sh.name, [sh](benchmark::State& s) { run_matmul(s, sh.m, sh.n, sh.k, sh.ta, sh.tb); })
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  // Squares per dtype: the same uniform [0, 1) values rounded to the dtype.
  struct Dtype {
    const char* name;
    ember::ScalarType type;
  };
  for (Dtype dt : {Dtype{"float32", ember::kFloat}, Dtype{"bfloat16", ember::kBFloat16}, Dtype{"float16", ember::kHalf}})
    for (int64_t n : {256, 512, 1024})
      benchmark::RegisterBenchmark(("matmul_dtype/" + std::string(dt.name) + "/" + std::to_string(n)).c_str(),
                                   [dt, n](benchmark::State& s) {
                                     ember::Tensor a = ember::rand({n, n}).to(dt.type);
                                     ember::Tensor b = ember::rand({n, n}).to(dt.type);
                                     for (auto _ : s) {
                                       ember::Tensor c = ember::matmul(a, b);
                                       benchmark::DoNotOptimize(c.data_ptr());
                                     }
                                     set_flops(s, n, n, n);
                                   })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
  return true;
}();

void sizes_and_threads(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "threads"});
  for (int64_t n : {64, 128, 256, 512, 1024})
    for (int64_t t : {1, 2}) b->Args({n, t});
  // Wall time: the CPU column counts only the benchmark thread, not OpenMP's workers.
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  ember::set_num_threads(static_cast<int>(state.range(1)));
  run_matmul(state, n, n, n);
}
BENCHMARK(BM_Matmul)->Apply(sizes_and_threads);

}  // namespace

BENCHMARK_MAIN();
