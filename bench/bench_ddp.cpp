// DistributedDataParallel's cost at world size 1: one training step of the MLP 784-512-256-10
// (batch 128, AdamW) plainly, and the same step through DDP on a one-rank gloo group (the
// post-accumulate-grad hooks filling the buckets, one allreduce per bucket, the final
// callback's wait and copy back). Issue 8's target: at most 5% slower than plain training.
//
//   build-bench/bench/bench_ddp
//
// On a shared machine compare the "min" rows (best of 5 repetitions), and the CPU column with
// OMP_NUM_THREADS=1 (process CPU time: what the step costs, whatever else runs on the machine).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <ember/dist/dist.h>
#include <ember/ember.h>

namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;
namespace dist = ember::dist;
using ember::Tensor;

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// A one-rank gloo group as the default group, made once for the whole program.
void ensure_group() {
  if (dist::is_initialized()) return;
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(30));
  dist::init_process_group("gloo", "", std::chrono::seconds(30), 1, 0, store);
}

nn::Sequential make_mlp() {
  return nn::Sequential(nn::Flatten(), nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 256), nn::ReLU(),
                        nn::Linear(256, 10));
}

// state.range(0): 0 plain, 1 through DDP.
void BM_MlpStep(benchmark::State& state) {
  ember::manual_seed(0);
  nn::Sequential mlp = make_mlp();
  std::shared_ptr<dist::DistributedDataParallel> ddp;
  if (state.range(0) == 1) {
    ensure_group();
    ddp = std::make_shared<dist::DistributedDataParallel>(mlp);
  }
  ember::optim::AdamW optimizer(mlp->parameters(), ember::optim::AdamWOptions(2e-3).weight_decay(1e-4));
  Tensor x = ember::randn({128, 1, 28, 28});
  Tensor y = ember::randint(0, 10, {128});
  for (auto _ : state) {
    Tensor logits = ddp ? (*ddp)->forward(x) : mlp->forward(x);
    Tensor loss = F::cross_entropy(logits, y);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  state.SetLabel(state.range(0) == 1 ? "ddp" : "plain");
}
BENCHMARK(BM_MlpStep)
    ->ArgName("ddp")
    ->Arg(0)
    ->Arg(1)
    ->Repetitions(5)
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()  // the CPU column: every thread's time, gloo's worker's included
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
