// Elementwise throughput: add, mul, exp on 1M and 16M float32 elements, allocating a new
// output and in place, with 1 and 2 threads; and the canonical workloads compared with
// PyTorch (register_canonical, at the end). bytes_per_second counts every tensor touched.
#include <benchmark/benchmark.h>

#include <ember/ember.h>

#include <string>
#include <utility>

namespace {

constexpr int64_t k1M = int64_t{1} << 20;
constexpr int64_t k16M = int64_t{1} << 24;

// The thread count OMP_NUM_THREADS gave at start: the threads:N benchmarks below set their
// own and restore this one, so the canonical benchmarks run with the harness's count.
const int kStartThreads = ember::get_num_threads();

struct Threads {
  explicit Threads(int64_t n) { ember::set_num_threads(static_cast<int>(n)); }
  ~Threads() { ember::set_num_threads(kStartThreads); }
};

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
  Threads threads(state.range(1));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::rand({state.range(0)});
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_Add)->Apply(sizes_and_threads);

void BM_AddInplace(benchmark::State& state) {
  Threads threads(state.range(1));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::zeros({state.range(0)});
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_AddInplace)->Apply(sizes_and_threads);

void BM_Mul(benchmark::State& state) {
  Threads threads(state.range(1));
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
  Threads threads(state.range(1));
  ember::Tensor a = ember::rand({state.range(0)}), b = ember::ones({state.range(0)});
  for (auto _ : state) {
    a.mul_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
  set_bytes(state, 2);
}
BENCHMARK(BM_MulInplace)->Apply(sizes_and_threads);

void BM_MulScalar(benchmark::State& state) {
  Threads threads(state.range(1));
  ember::Tensor a = ember::rand({state.range(0)});
  for (auto _ : state) {
    ember::Tensor c = a * 1.5;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_bytes(state, 1);
}
BENCHMARK(BM_MulScalar)->Apply(sizes_and_threads);

void BM_Exp(benchmark::State& state) {
  Threads threads(state.range(1));
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
  Threads threads(state.range(1));
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

// ---- canonical workloads (bench/compare.py looks these names up) ------------------------
// float32, n = 1<<20 ("1M") or 1<<24 ("16M"); inputs x = randn(n), y = randn(n); each
// iteration allocates its output; threads from OMP_NUM_THREADS:
//   add/N: x + y   mul/N: x * y   relu/N: relu(x)   exp/N: exp(x)
//   gelu/N: gelu(x) (exact erf form, approximate="none")
// bytes_per_second counts every tensor read and written (3n floats for add/mul, 2n else).
void register_canonical() {
  auto unary = [](const char* name, int64_t n, ember::Tensor (*f)(const ember::Tensor&)) {
    benchmark::RegisterBenchmark(name, [n, f](benchmark::State& state) {
      ember::Tensor x = ember::randn({n});
      for (auto _ : state) {
        ember::Tensor c = f(x);
        benchmark::DoNotOptimize(c.data_ptr());
      }
      state.SetBytesProcessed(state.iterations() * n * int64_t{sizeof(float)} * 2);
    })->Unit(benchmark::kMicrosecond)->UseRealTime();
  };
  auto binary = [](const char* name, int64_t n, ember::Tensor (*f)(const ember::Tensor&, const ember::Tensor&)) {
    benchmark::RegisterBenchmark(name, [n, f](benchmark::State& state) {
      ember::Tensor x = ember::randn({n}), y = ember::randn({n});
      for (auto _ : state) {
        ember::Tensor c = f(x, y);
        benchmark::DoNotOptimize(c.data_ptr());
      }
      state.SetBytesProcessed(state.iterations() * n * int64_t{sizeof(float)} * 3);
    })->Unit(benchmark::kMicrosecond)->UseRealTime();
  };
  using T = const ember::Tensor&;
  for (auto [suffix, n] : {std::pair{"1M", k1M}, std::pair{"16M", k16M}}) {
    std::string s = std::string("/") + suffix;
    binary(("add" + s).c_str(), n, [](T a, T b) { return a + b; });
    binary(("mul" + s).c_str(), n, [](T a, T b) { return a * b; });
    unary(("relu" + s).c_str(), n, [](T a) { return ember::relu(a); });
    unary(("exp" + s).c_str(), n, [](T a) { return a.exp(); });
    unary(("gelu" + s).c_str(), n, [](T a) { return ember::gelu(a); });
  }
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
