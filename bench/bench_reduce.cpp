// Reduction throughput: sum over 16M float32 elements (all of them, and along each dim of a
// 4096x4096 matrix), with 1 and 2 threads.
#include <benchmark/benchmark.h>

#include <ember/ember.h>

namespace {

constexpr int64_t k16M = int64_t{1} << 24;

void threads_arg(benchmark::internal::Benchmark* b) {
  // Wall time: the CPU column counts only the benchmark thread, not OpenMP's workers.
  b->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
}

void BM_SumAll(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  ember::Tensor a = ember::rand({k16M});
  for (auto _ : state) {
    ember::Tensor s = a.sum();
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * int64_t{sizeof(float)});
}
BENCHMARK(BM_SumAll)->Apply(threads_arg);

// Rows of a 4096x4096 matrix: contiguous inner reductions.
void BM_SumLastDim(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  ember::Tensor a = ember::rand({4096, 4096});
  for (auto _ : state) {
    ember::Tensor s = a.sum({1});
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * int64_t{sizeof(float)});
}
BENCHMARK(BM_SumLastDim)->Apply(threads_arg);

// Columns: each output sums a strided column.
void BM_SumFirstDim(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  ember::Tensor a = ember::rand({4096, 4096});
  for (auto _ : state) {
    ember::Tensor s = a.sum({0});
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * int64_t{sizeof(float)});
}
BENCHMARK(BM_SumFirstDim)->Apply(threads_arg);

}  // namespace

BENCHMARK_MAIN();
