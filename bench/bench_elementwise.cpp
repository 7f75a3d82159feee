// Elementwise throughput: add, mul, exp on 1M and 16M float32 elements, allocating a new
// output and in place, with 1 and 2 threads. bytes_per_second counts every tensor touched.
#include <benchmark/benchmark.h>

#include <ember/ember.h>

namespace {

constexpr int64_t k1M = int64_t{1} << 20;
constexpr int64_t k16M = int64_t{1} << 24;

void sizes_and_threads(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "threads"});
  for (int64_t n : {k1M, k16M})
    for (int64_t t : {1, 2}) b->Args({n, t});
  // Wall time: the CPU column counts only the benchmark thread, not OpenMP's workers.
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

// Each iteration reads `reads` tensors and writes one, of n floats each.
void set_bytes(benchmark::State& state, int reads) {
  state.SetBytesProcessed(state.iterations() * state.range(0) * int64_t{sizeof(float)} * (reads + 1));
}

void BM_Add(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::rand({state.range(0)});
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_Add)->Apply(sizes_and_threads);

void BM_AddInplace(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::zeros({state.range(0)});
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_AddInplace)->Apply(sizes_and_threads);

void BM_Mul(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::rand({state.range(0)});
  for (auto _ : state) {
    ember::Tensor c = a * b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_Mul)->Apply(sizes_and_threads);

// Multiplying by ones keeps the values (and so the work) the same every iteration.
void BM_MulInplace(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::ones({state.range(0)});
  for (auto _ : state) {
    a.mul_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_MulInplace)->Apply(sizes_and_threads);

void BM_MulScalar(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor a = ember::rand({state.range(0)});
  for (auto _ : state) {
    ember::Tensor c = a * 1.5;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_bytes(state, 1);
}
BENCHMARK(BM_MulScalar)->Apply(sizes_and_threads);

void BM_Exp(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor a = ember::rand({state.range(0)});
  for (auto _ : state) {
    ember::Tensor c = a.exp();
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_bytes(state, 1);
}
BENCHMARK(BM_Exp)->Apply(sizes_and_threads);

// exp_ would overflow to inf after a few rounds; refill the input outside the timed region so
// every iteration sees values in [0, 1).
void BM_ExpInplace(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::Tensor src = ember::rand({state.range(0)});
  ember::Tensor a = src.clone();
  for (auto _ : state) {
    a.exp_();
    benchmark::DoNotOptimize(a.data_ptr());
    state.PauseTiming();
    a.copy_(src);
    state.ResumeTiming();
  }
  set_bytes(state, 1);
}
BENCHMARK(BM_ExpInplace)->Apply(sizes_and_threads);

}  // namespace

BENCHMARK_MAIN();
