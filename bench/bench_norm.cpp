// softmax and layer_norm on (4096, 1024) float32 rows.
//
// Canonical workloads (names looked up by the comparison harness; thread count from
// OMP_NUM_THREADS; allocating forms, no autograd):
//   softmax/4096x1024     x.softmax(-1) on x = randn(4096, 1024)
//   layer_norm/4096x1024  F::layer_norm(x, LayerNormFuncOptions({1024}).weight(w).bias(b)) on
//                         x = randn(4096, 1024), w = randn(1024), b = randn(1024), eps 1e-5
// bytes_per_second counts the input read and the output written (2 x 16 MiB per call).
// The *_fwdbwd variants also run the backward of (y * g).sum() w.r.t. x (and w, b for
// layer_norm), with g = randn(4096, 1024): they are ember's own, for the training step.
#include <benchmark/benchmark.h>

#include <ember/ember.h>
#include <ember/nn/functional/normalization.h>

namespace {

namespace F = ember::nn::functional;
using ember::Tensor;

constexpr int64_t kRows = 4096, kCols = 1024;

void set_bytes(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * kRows * kCols * int64_t{sizeof(float)} * 2);
}

void BM_Softmax(benchmark::State& state) {
  Tensor x = ember::randn({kRows, kCols});
  for (auto _ : state) {
    Tensor y = x.softmax(-1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_bytes(state);
}

void BM_LayerNorm(benchmark::State& state) {
  Tensor x = ember::randn({kRows, kCols}), w = ember::randn({kCols}), b = ember::randn({kCols});
  auto opts = F::LayerNormFuncOptions({kCols}).weight(w).bias(b).eps(1e-5);
  for (auto _ : state) {
    Tensor y = F::layer_norm(x, opts);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  set_bytes(state);
}

void BM_SoftmaxFwdBwd(benchmark::State& state) {
  Tensor x = ember::randn({kRows, kCols}).requires_grad_(true), g = ember::randn({kRows, kCols});
  for (auto _ : state) {
    x.softmax(-1).backward(g);
    x.mutable_grad().reset();
  }
}

void BM_LayerNormFwdBwd(benchmark::State& state) {
  Tensor x = ember::randn({kRows, kCols}).requires_grad_(true), g = ember::randn({kRows, kCols});
  Tensor w = ember::randn({kCols}).requires_grad_(true), b = ember::randn({kCols}).requires_grad_(true);
  auto opts = F::LayerNormFuncOptions({kCols}).weight(w).bias(b).eps(1e-5);
  for (auto _ : state) {
    F::layer_norm(x, opts).backward(g);
    for (Tensor* t : {&x, &w, &b}) t->mutable_grad().reset();
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("softmax/4096x1024", BM_Softmax)->Unit(benchmark::kMicrosecond)->UseRealTime();
  benchmark::RegisterBenchmark("layer_norm/4096x1024", BM_LayerNorm)->Unit(benchmark::kMicrosecond)->UseRealTime();
  benchmark::RegisterBenchmark("softmax_fwdbwd/4096x1024", BM_SoftmaxFwdBwd)->Unit(benchmark::kMicrosecond)->UseRealTime();
  benchmark::RegisterBenchmark("layer_norm_fwdbwd/4096x1024", BM_LayerNormFwdBwd)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
