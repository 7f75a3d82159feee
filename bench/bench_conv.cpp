// conv2d on the Fashion-MNIST trainer's shapes (3x3 kernels, padding 1): 1 -> 32 channels
// at 28x28, 32 -> 64 at 14x14 and at 28x28; batch 64 and 256, with 1 and 2 threads.
// Forward alone, and forward + backward (input gradient only where the trainer needs one,
// i.e. not for the first layer, whose input is the data).
#include <benchmark/benchmark.h>

#include <ember/core/ops/conv.h>
#include <ember/ember.h>

namespace {

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "cin", "cout", "hw", "threads"});
  for (int64_t batch : {64, 256})
    for (auto [cin, cout, hw] : {std::array<int64_t, 3>{1, 32, 28}, {32, 64, 14}, {32, 64, 28}})
      for (int64_t t : {1, 2}) b->Args({batch, cin, cout, hw, t});
  // Wall time: the CPU column counts only the benchmark thread, not OpenMP's workers.
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

struct Setup {
  ember::Tensor x, w, b, gy;
  explicit Setup(benchmark::State& state) {
    const int64_t n = state.range(0), cin = state.range(1), cout = state.range(2), hw = state.range(3);
    ember::set_num_threads(static_cast<int>(state.range(4)));
    x = ember::randn({n, cin, hw, hw});
    w = ember::randn({cout, cin, 3, 3});
    b = ember::randn({cout});
    gy = ember::randn({n, cout, hw, hw});
    // GFLOP of one forward (2 per multiply-add), reported as a rate.
    state.counters["GFLOP"] = benchmark::Counter(2.0 * static_cast<double>(n * cout * cin * 9 * hw * hw) / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  }
};

void BM_Conv2dForward(benchmark::State& state) {
  Setup s(state);
  ember::NoGradGuard no_grad;
  for (auto _ : state) {
    ember::Tensor y = ember::conv2d(s.x, s.w, s.b, 1, 1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK(BM_Conv2dForward)->Apply(shapes);

void BM_Conv2dForwardBackward(benchmark::State& state) {
  Setup s(state);
  s.x.requires_grad_(state.range(1) > 1);
  s.w.requires_grad_(true);
  s.b.requires_grad_(true);
  for (auto _ : state) {
    ember::Tensor y = ember::conv2d(s.x, s.w, s.b, 1, 1);
    y.backward(s.gy);
    benchmark::DoNotOptimize(s.w.grad().data_ptr());
    s.w.mutable_grad().reset();
    s.b.mutable_grad().reset();
    if (s.x.requires_grad()) s.x.mutable_grad().reset();
  }
}
BENCHMARK(BM_Conv2dForwardBackward)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
