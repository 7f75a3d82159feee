// How much of DistributedDataParallel's gradient allreduce hides behind backward (issue 8's
// "overlap" measurement). Run under the launcher, one process per rank:
//
//   build-bench/ember-run --nproc-per-node 2 --standalone build-bench/bench/bench_ddp_overlap
//
// Each iteration times, on every rank, in lockstep (barrier before each part):
//   plain      forward + backward of the model alone (no DDP: compute only);
//   ddp        the same forward + backward through DDP, until its final callback has waited
//              for every bucket's allreduce and written the averaged gradients back;
//   allreduce  the allreduces of buffers with DDP's bucket sizes, launched back to back and
//              then waited for, as the reducer does — the communication alone.
// exposed = ddp - plain is the communication backward did not hide, and
// hidden share = 1 - exposed / allreduce. Reported as counters (medians over the
// iterations); the DDP step time is the benchmark's time.
//
// The iteration count is fixed (every rank must run the same collectives); the model is an
// MLP 1024-2048-2048-2048-10 (~10.5 M parameters, 42 MB of float32 gradients: DDP's 1 MiB
// first bucket and 25 MiB buckets after), batch 64, one compute thread per rank unless
// EMBER_BENCH_THREADS says otherwise.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include <ember/dist/dist.h>
#include <ember/ember.h>

namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;
namespace dist = ember::dist;
using ember::Tensor;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

nn::Sequential make_mlp() {
  return nn::Sequential(nn::Linear(1024, 2048), nn::ReLU(), nn::Linear(2048, 2048), nn::ReLU(),
                        nn::Linear(2048, 2048), nn::ReLU(), nn::Linear(2048, 10));
}

// One forward + backward; through `ddp` when given (then it also waits for the reduction).
void forward_backward(nn::Sequential& mlp, dist::DistributedDataParallel* ddp, const Tensor& x, const Tensor& y) {
  for (auto& p : mlp->parameters()) p.mutable_grad() = Tensor();
  Tensor logits = ddp ? (*ddp)->forward(x) : mlp->forward(x);
  F::cross_entropy(logits, y).backward();
}

// Flat float32 buffers of the sizes of DDP's buckets, in its allreduce order.
std::vector<Tensor> bucket_buffers(const dist::DistributedDataParallel& ddp, const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  for (const auto& bucket : ddp->bucket_indices()) {
    int64_t n = 0;
    for (size_t i : bucket) n += params[i].numel();
    out.push_back(ember::randn({n}));
  }
  return out;
}

void BM_DdpOverlap(benchmark::State& state) {
  ember::manual_seed(0);
  nn::Sequential mlp = make_mlp();
  dist::DistributedDataParallel ddp(mlp);
  const std::vector<Tensor> params = mlp->parameters();
  std::vector<Tensor> buckets = bucket_buffers(ddp, params);
  ember::manual_seed(1 + dist::get_rank());  // each rank its own batch
  Tensor x = ember::randn({64, 1024});
  Tensor y = ember::randint(0, 10, {64});

  std::vector<double> plain, with_ddp, comm;
  for (auto _ : state) {
    dist::barrier();
    auto t0 = Clock::now();
    forward_backward(mlp, nullptr, x, y);
    plain.push_back(ms_since(t0));

    dist::barrier();
    t0 = Clock::now();
    forward_backward(mlp, &ddp, x, y);
    const double ddp_ms = ms_since(t0);
    with_ddp.push_back(ddp_ms);
    state.SetIterationTime(ddp_ms / 1e3);

    dist::barrier();
    t0 = Clock::now();
    std::vector<ember::intrusive_ptr<dist::Work>> works;
    for (Tensor& b : buckets) works.push_back(dist::all_reduce(b, dist::ReduceOp::SUM, /*async_op=*/true));
    for (auto& w : works) w->wait();
    comm.push_back(ms_since(t0));
  }
  const double p = median(plain), d = median(with_ddp), c = median(comm);
  state.counters["plain_ms"] = p;
  state.counters["ddp_ms"] = d;
  state.counters["allreduce_ms"] = c;
  state.counters["exposed_ms"] = d - p;
  state.counters["hidden_share"] = c > 0 ? std::clamp(1.0 - (d - p) / c, 0.0, 1.0) : 0.0;
  state.counters["buckets"] = static_cast<double>(buckets.size());
  state.counters["world"] = dist::get_world_size();
}
BENCHMARK(BM_DdpOverlap)->Iterations(20)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  const char* threads = std::getenv("EMBER_BENCH_THREADS");
  ember::set_num_threads(threads ? std::atoi(threads) : 1);
  dist::init_process_group("gloo");  // RANK, WORLD_SIZE, MASTER_ADDR/PORT from ember-run
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  dist::destroy_process_group();
}
