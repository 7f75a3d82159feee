// conv2d on CNN shapes (3x3 kernels, padding 1, stride 1, with bias).
//
// Canonical workloads (the comparison harness runs the same on PyTorch; thread count from
// OMP_NUM_THREADS): x = randn(N, C, H, W), w = randn(O, C, 3, 3), b = randn(O), all float32.
//   conv2d_fwd/<name>:    y = conv2d(x, w, b, stride 1, padding 1), no autograd recording.
//   conv2d_fwdbwd/<name>: the same with w, b (and x when C > 1) requiring grad, then
//                         y.sum().backward() (gradients of x, w, b), then the grads reset.
//                         The 1-channel first layer has no input gradient (as in a network).
//   b64_1to32_28:  N 64, C 1,  O 32, H = W = 28
//   b64_32to64_14: N 64, C 32, O 64, H = W = 14
//   b32_64to64_56: N 32, C 64, O 64, H = W = 56
// FLOP counter: 2 * N * O * C * 9 * H * W per forward (multiply-adds of the convolution), 2x
// that for the backward with input gradient, 1x without, as a rate.
//
// Beside them, the older sweep (batch 64 and 256, 1 and 2 threads, backward of a random
// gradient), and conv_gemm/<name>: the cpu::gemm calls alone that the im2col path of the
// forward makes for that workload (same shapes, same tiling), to split GEMM time from the rest.
#include <benchmark/benchmark.h>

#include <array>
#include <string>
#include <vector>

#include <ember/core/cpu/gemm.h>
#include <ember/core/ops/conv.h>
#include <ember/ember.h>

namespace {

struct Workload {
  const char* name;
  int64_t n, cin, cout, hw;
};
constexpr Workload kCanonical[] = {{"b64_1to32_28", 64, 1, 32, 28},
                                   {"b64_32to64_14", 64, 32, 64, 14},
                                   {"b32_64to64_56", 32, 64, 64, 56}};

double forward_flop(const Workload& w) { return 2.0 * static_cast<double>(w.n * w.cout * w.cin * 9 * w.hw * w.hw); }

void canonical_forward(benchmark::State& state, Workload wl) {
  ember::manual_seed(0);
  ember::Tensor x = ember::randn({wl.n, wl.cin, wl.hw, wl.hw}), w = ember::randn({wl.cout, wl.cin, 3, 3}),
                b = ember::randn({wl.cout});
  ember::NoGradGuard no_grad;
  for (auto _ : state) {
    ember::Tensor y = ember::conv2d(x, w, b, 1, 1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["FLOP"] = benchmark::Counter(forward_flop(wl), benchmark::Counter::kIsIterationInvariantRate);
}

void canonical_forward_backward(benchmark::State& state, Workload wl) {
  ember::manual_seed(0);
  ember::Tensor x = ember::randn({wl.n, wl.cin, wl.hw, wl.hw}), w = ember::randn({wl.cout, wl.cin, 3, 3}),
                b = ember::randn({wl.cout});
  const bool input_grad = wl.cin > 1;
  x.requires_grad_(input_grad);
  w.requires_grad_(true);
  b.requires_grad_(true);
  for (auto _ : state) {
    ember::Tensor y = ember::conv2d(x, w, b, 1, 1);
    y.sum().backward();
    benchmark::DoNotOptimize(w.grad().data_ptr());
    w.mutable_grad().reset();
    b.mutable_grad().reset();
    if (input_grad) x.mutable_grad().reset();
  }
  state.counters["FLOP"] =
      benchmark::Counter(forward_flop(wl) * (input_grad ? 3 : 2), benchmark::Counter::kIsIterationInvariantRate);
}

/// The forward's GEMMs alone: per tile of kColBudget-sized columns (see core/cpu/conv.cpp),
/// out (O x span) = w (O x 9C) * col (9C x span), over the whole batch, one call per image.
void conv_gemm(benchmark::State& state, Workload wl) {
  const int64_t k = wl.cin * 9, l = wl.hw * wl.hw;
  const int64_t budget = int64_t{1} << 17;
  const int64_t span = k * l <= budget ? l : std::max<int64_t>(1, budget / (k * wl.hw)) * wl.hw;
  std::vector<float> a(static_cast<size_t>(wl.cout * k), 0.5f), col(static_cast<size_t>(k * span), 0.25f),
      c(static_cast<size_t>(wl.cout * l));
  const int64_t calls = wl.n * ((l + span - 1) / span);
  for (auto _ : state) {
    for (int64_t i = 0; i < calls; ++i)
      ember::cpu::gemm<float>(false, false, wl.cout, span, k, 1, a.data(), k, col.data(), span, 0, c.data(), l);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP"] = benchmark::Counter(forward_flop(wl), benchmark::Counter::kIsIterationInvariantRate);
}

const bool kRegistered = [] {
  for (const Workload& wl : kCanonical) {
    benchmark::RegisterBenchmark((std::string("conv2d_fwd/") + wl.name).c_str(), canonical_forward, wl)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("conv2d_fwdbwd/") + wl.name).c_str(), canonical_forward_backward, wl)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("conv_gemm/") + wl.name).c_str(), conv_gemm, wl)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

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
