// Per-op overhead: ops on 1-element tensors, where the time is all dispatch, allocation and
// autograd bookkeeping rather than arithmetic. The same file builds against libtorch
// (libtorch_overhead.cpp defines EMBER_BENCH_LIBTORCH) for the side-by-side figure.
#include <benchmark/benchmark.h>

#ifdef EMBER_BENCH_LIBTORCH
#include <torch/torch.h>
#else
#include <ember/ember.h>
namespace torch = ember;
#endif

namespace {

// Each benchmark takes the thread count as its argument; on one element it must not matter.
// Wall time: with 2 threads the worker threads' CPU time is not the benchmark thread's.
void threads_arg(benchmark::internal::Benchmark* b) { b->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime(); }

// a + b with no input requiring grad: no autograd node is recorded.
void BM_AddTiny(benchmark::State& state) {
  torch::set_num_threads(static_cast<int>(state.range(0)));
  torch::Tensor a = torch::ones({1}), b = torch::ones({1});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_AddTiny)->Apply(threads_arg);

// a + b under NoGradGuard although `a` requires grad: the recording check is skipped.
void BM_AddTinyNoGradGuard(benchmark::State& state) {
  torch::set_num_threads(static_cast<int>(state.range(0)));
  torch::Tensor a = torch::ones({1}, torch::requires_grad()), b = torch::ones({1});
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_AddTinyNoGradGuard)->Apply(threads_arg);

// a + b with `a` requiring grad: each add records an AddBackward0 node (freed with c).
void BM_AddTinyRecorded(benchmark::State& state) {
  torch::set_num_threads(static_cast<int>(state.range(0)));
  torch::Tensor a = torch::ones({1}, torch::requires_grad()), b = torch::ones({1});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_AddTinyRecorded)->Apply(threads_arg);

// In-place add on a tensor that needs no grad: no output allocation.
void BM_AddTinyInplace(benchmark::State& state) {
  torch::set_num_threads(static_cast<int>(state.range(0)));
  torch::Tensor a = torch::zeros({1}), b = torch::zeros({1});
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
}
BENCHMARK(BM_AddTinyInplace)->Apply(threads_arg);

// A whole tiny training step: forward mul + sum, backward through both into x.grad.
void BM_MulSumBackwardTiny(benchmark::State& state) {
  torch::set_num_threads(static_cast<int>(state.range(0)));
  torch::Tensor x = torch::ones({1}, torch::requires_grad());
  torch::Tensor w = torch::full({1}, 2.0);
  for (auto _ : state) {
    torch::Tensor loss = (x * w).sum();
    loss.backward();
  }
  benchmark::DoNotOptimize(x.grad().data_ptr());
}
BENCHMARK(BM_MulSumBackwardTiny)->Apply(threads_arg);

// ---- canonical benchmarks (bench/compare.py looks these names up) ----------------------------
// No thread argument and no set_num_threads: the harness sets OMP_NUM_THREADS. Wall time.

// overhead/add: c = a + b on two 1-element float32 tensors (torch.ones(1)), neither requiring
// grad; c is freed each iteration.
void BM_OverheadAdd(benchmark::State& state) {
  torch::Tensor a = torch::ones({1}), b = torch::ones({1});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}

// overhead/add_recorded: c = a + b as above but `a` requires grad, so each add records an
// AddBackward0 node (freed with c).
void BM_OverheadAddRecorded(benchmark::State& state) {
  torch::Tensor a = torch::ones({1}, torch::requires_grad()), b = torch::ones({1});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}

// overhead/mul_sum_backward: x = torch.ones(1, requires_grad=True), w = torch.full((1,), 2.0);
// each iteration (x * w).sum().backward(), accumulating into x.grad (never zeroed).
void BM_OverheadMulSumBackward(benchmark::State& state) {
  torch::Tensor x = torch::ones({1}, torch::requires_grad());
  torch::Tensor w = torch::full({1}, 2.0);
  for (auto _ : state) {
    torch::Tensor loss = (x * w).sum();
    loss.backward();
  }
  benchmark::DoNotOptimize(x.grad().data_ptr());
}

const bool kCanonicalRegistered = [] {
  benchmark::RegisterBenchmark("overhead/add", BM_OverheadAdd)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("overhead/add_recorded", BM_OverheadAddRecorded)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("overhead/mul_sum_backward", BM_OverheadMulSumBackward)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
