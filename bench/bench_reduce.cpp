// Reduction throughput: sum over 16M float32 elements (all of them, and along each dim of a
// 4096x4096 matrix), with 1 and 2 threads; and the canonical workloads compared with PyTorch
// (register_canonical, at the end).
#include <benchmark/benchmark.h>

#include <ember/ember.h>

#include <tuple>
#include <vector>

namespace {

constexpr int64_t k16M = int64_t{1} << 24;

// The thread count OMP_NUM_THREADS gave at start: the threads:N benchmarks below set their
// own and restore this one, so the canonical benchmarks run with the harness's count.
const int kStartThreads = ember::get_num_threads();

struct Threads {
  explicit Threads(int64_t n) { ember::set_num_threads(static_cast<int>(n)); }
  ~Threads() { ember::set_num_threads(kStartThreads); }
};

void threads_arg(benchmark::internal::Benchmark* b) {
  // Wall time: the CPU column counts only the benchmark thread, not OpenMP's workers.
  b->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
}

void BM_SumAll(benchmark::State& state) {
  Threads threads(state.range(0));
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
  Threads threads(state.range(0));
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
  Threads threads(state.range(0));
  ember::Tensor a = ember::rand({4096, 4096});
  for (auto _ : state) {
    ember::Tensor s = a.sum({0});
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * int64_t{sizeof(float)});
}
BENCHMARK(BM_SumFirstDim)->Apply(threads_arg);

// ---- canonical workloads (bench/compare.py looks these names up) ------------------------
// float32 x = randn(1<<24) for the whole-tensor forms, x = randn(4096, 4096) for the rows;
// threads from OMP_NUM_THREADS:
//   sum/16M: x.sum()   mean/16M: x.mean()   max/16M: x.max()
//   sum_rows/4096x4096: x.sum(1)   mean_rows/4096x4096: x.mean(1)
//   max_rows/4096x4096: std::get<0>(x.max(1)) (values and indices computed)
// bytes_per_second counts the input's bytes (the outputs are negligible).
void register_canonical() {
  using T = const ember::Tensor&;
  auto reg = [](const char* name, std::vector<int64_t> shape, ember::Tensor (*f)(T)) {
    benchmark::RegisterBenchmark(name, [shape, f](benchmark::State& state) {
      ember::Tensor x = ember::randn(shape);
      for (auto _ : state) {
        ember::Tensor r = f(x);
        benchmark::DoNotOptimize(r.data_ptr());
      }
      state.SetBytesProcessed(state.iterations() * x.numel() * int64_t{sizeof(float)});
    })->Unit(benchmark::kMicrosecond)->UseRealTime();
  };
  reg("sum/16M", {k16M}, [](T x) { return x.sum(); });
  reg("mean/16M", {k16M}, [](T x) { return x.mean(); });
  reg("max/16M", {k16M}, [](T x) { return x.max(); });
  reg("sum_rows/4096x4096", {4096, 4096}, [](T x) { return x.sum({1}); });
  reg("mean_rows/4096x4096", {4096, 4096}, [](T x) { return x.mean({1}); });
  reg("max_rows/4096x4096", {4096, 4096}, [](T x) { return std::get<0>(x.max(1)); });
}

}  // namespace

int main(int argc, char** argv) {
  register_canonical();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
