// scaled_dot_product_attention forward + backward on the CPU: the fused op (flash-attention
// style, core/cpu/attention.cpp) against the plain composition (matmul, softmax, matmul:
// ember::detail::sdpa_math), at B=1, H=8, head size 64, L = S = 512 and 2048, float32, causal
// off; the *_dropout rows add dropout_p = 0.1 (the fused op draws its mask inside the
// kernels and regenerates it in the backward; the plain one draws and keeps an [L, S] noise
// tensor). Each benchmark also reports `footprint_MiB`: the CPU allocator's high-water bytes for
// one forward + backward (allocated + cached after emptying the cache first: the cache keeps
// every block the step needed at once), which is where the fused op's O(L) memory shows.
// bench/attention_pytorch.py times PyTorch's F.scaled_dot_product_attention on the same shapes.
//
//   ./build/bench/bench_attention --benchmark_filter=512 --benchmark_min_time=0.01
#include <benchmark/benchmark.h>

#include <ember/core/ops/attention.h>
#include <ember/ember.h>

namespace {

using ember::Tensor;

constexpr int64_t kBatch = 1, kHeads = 8, kHead = 64;

struct Inputs {
  Tensor q, k, v, g;
  explicit Inputs(int64_t L) {
    ember::manual_seed(0);
    q = ember::randn({kBatch, kHeads, L, kHead}).requires_grad_(true);
    k = ember::randn({kBatch, kHeads, L, kHead}).requires_grad_(true);
    v = ember::randn({kBatch, kHeads, L, kHead}).requires_grad_(true);
    g = ember::randn({kBatch, kHeads, L, kHead});
  }
  void reset_grads() {
    for (Tensor* t : {&q, &k, &v}) t->mutable_grad().reset();
  }
};

constexpr double kDropout = 0.1;

template <bool Fused, bool Dropout = false>
Tensor attend(const Inputs& in) {
  const double p = Dropout ? kDropout : 0.0;
  if constexpr (Fused)  // the public function takes the fused op, with dropout too
    return Dropout ? ember::scaled_dot_product_attention(in.q, in.k, in.v, {}, p)
                   : ember::detail::sdpa_fused(in.q, in.k, in.v);
  else
    return ember::detail::sdpa_math(in.q, in.k, in.v, {}, p);
}

/// High-water allocator bytes of one forward + backward, in MiB.
template <bool Fused, bool Dropout>
double footprint_mib(Inputs& in) {
  ember::cpu_empty_cache();
  const size_t before = ember::cpu_allocator_stats().allocated_bytes;
  attend<Fused, Dropout>(in).backward(in.g);
  in.reset_grads();
  ember::CpuAllocatorStats s = ember::cpu_allocator_stats();
  return static_cast<double>(s.allocated_bytes + s.cached_bytes - before) / (1 << 20);
}

template <bool Fused, bool Dropout = false>
void BM_SdpaFwdBwd(benchmark::State& state) {
  const int64_t L = state.range(0);
  Inputs in(L);
  const double mib = footprint_mib<Fused, Dropout>(in);
  for (auto _ : state) {
    attend<Fused, Dropout>(in).backward(in.g);
    in.reset_grads();
  }
  // Forward 2 products of 2 L^2 E flops, backward 5 (the fused backward recomputes Q K^T).
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(kBatch * kHeads * L * L * kHead) * 2 * (Fused ? 7 : 6),
                         benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["footprint_MiB"] = mib;
}

template <bool Fused, bool Dropout = false>
void BM_SdpaFwd(benchmark::State& state) {
  const int64_t L = state.range(0);
  Inputs in(L);
  ember::NoGradGuard no_grad;
  for (auto _ : state) {
    Tensor y = attend<Fused, Dropout>(in);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}

}  // namespace

BENCHMARK(BM_SdpaFwdBwd<true>)
    ->Name("sdpa_fused_fwdbwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwdBwd<false>)
    ->Name("sdpa_math_fwdbwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwd<true>)
    ->Name("sdpa_fused_fwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwd<false>)
    ->Name("sdpa_math_fwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwdBwd<true, true>)
    ->Name("sdpa_fused_dropout_fwdbwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwdBwd<false, true>)
    ->Name("sdpa_math_dropout_fwdbwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwd<true, true>)
    ->Name("sdpa_fused_dropout_fwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SdpaFwd<false, true>)
    ->Name("sdpa_math_dropout_fwd")
    ->Arg(512)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
