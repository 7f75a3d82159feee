// Square float32 matmul, n = 64 ... 1024, with 1 and 2 threads; the GFLOP/s counter counts
// 2 n^3 floating-point operations per product.
#include <benchmark/benchmark.h>

#include <ember/ember.h>

namespace {

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
  ember::Tensor a = ember::rand({n, n}), b = ember::rand({n, n});
  for (auto _ : state) {
    ember::Tensor c = ember::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  // GFLOP per product, reported as a rate (the column reads GFLOP=x/s, i.e. GFLOP/s).
  state.counters["GFLOP"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n) / 1e9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Matmul)->Apply(sizes_and_threads);

}  // namespace

BENCHMARK_MAIN();
