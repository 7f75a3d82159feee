// One rank of the DistributedDataParallel tests (tests/dist/test_ddp.cpp spawns 2 of them with
// torchrun's environment). Each scenario trains a DDP replica on this rank's half of a batch
// and, in the same process, a plain reference model on the whole batch (no communication), and
// checks that parameters (and gradients) agree. Exit code 0 = all checks passed; failures go
// to stderr, prefixed with the rank.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "ember/dist/distributed.h"
#include "ember/dist/distributed_data_parallel.h"
#include "ember/ember.h"
#include "worker_main.h"

namespace dist = ember::dist;
namespace F = ember::nn::functional;
using ember::Tensor;

using namespace ember::test::worker;

namespace {

/// A small MLP with a buffer, an optional unused layer, and a branch some ranks skip.
struct NetImpl : ember::nn::Module {
  explicit NetImpl(bool with_unused = false, int64_t hidden = 8) {
    fc1 = register_module("fc1", ember::nn::Linear(4, hidden));
    fc2 = register_module("fc2", ember::nn::Linear(hidden, 2));
    if (with_unused) {
      unused = register_module("unused", ember::nn::Linear(3, 3));
      extra = register_module("extra", ember::nn::Linear(2, 2));
    }
    scale = register_buffer("scale", ember::ones({1}));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = fc2(F::relu(fc1(x)));
    if (use_extra) y = extra(y);
    return y;
  }
  ember::nn::Linear fc1 = nullptr, fc2 = nullptr, unused = nullptr, extra = nullptr;
  Tensor scale;
  bool use_extra = false;
};
EMBER_MODULE(Net);

/// The same batch on every rank: 8 rows of 4 features, 2 targets.
std::pair<Tensor, Tensor> batch(int step) {
  ember::manual_seed(1000 + static_cast<uint64_t>(step));
  return {ember::randn({8, 4}), ember::randn({8, 2})};
}
Tensor half(const Tensor& t, int rank) { return t.narrow(0, rank * 4, 4); }

/// A net initialized from `seed`: every rank builds the reference from seed 0, and the DDP
/// replica from seed `rank`, so construction must broadcast rank 0's values.
Net make_net(uint64_t seed, bool with_unused = false) {
  ember::manual_seed(seed);
  return Net(with_unused);
}

double max_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].defined() != b[i].defined()) return INFINITY;
    if (a[i].defined()) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  }
  return m;
}
std::vector<Tensor> grads(const std::vector<Tensor>& ps) {
  std::vector<Tensor> g;
  for (auto& p : ps) g.push_back(p.grad());
  return g;
}

void init() { dist::init_process_group("gloo", "env://", std::chrono::seconds(20)); }

/// N steps of SGD: DDP on this rank's half vs the reference on the whole batch.
int run_train(std::optional<double> cap_mb) {
  init();
  Net ref = make_net(0);
  Net local = make_net(static_cast<uint64_t>(g_rank));
  local->scale.fill_(static_cast<double>(g_rank + 5));
  dist::DistributedDataParallel ddp(local, dist::ProcessGroupPtr(),
                                    dist::DistributedDataParallelOptions().bucket_cap_mb(cap_mb));
  check(max_diff(ddp->parameters(), ref->parameters()) == 0, "construction broadcasts rank 0's parameters");
  check(local->scale.item<double>() == 5, "construction broadcasts rank 0's buffers");
  if (cap_mb)
    check(ddp->bucket_indices().size() == 4, "a tiny cap puts each parameter in its own bucket");
  else
    check(ddp->bucket_indices().size() == 1, "a small model fits in the first bucket");

  ember::optim::SGD opt_ref(ref->parameters(), 0.1), opt(ddp->parameters(), 0.1);
  for (int step = 0; step < 5; ++step) {
    auto [x, y] = batch(step);
    opt_ref.zero_grad();
    F::mse_loss(ref->forward(x), y).backward();
    if (g_rank == 0) local->scale.fill_(static_cast<double>(step + 10));
    opt.zero_grad();
    F::mse_loss(ddp->forward(half(x, g_rank)), half(y, g_rank)).backward();
    check(local->scale.item<double>() == step + 10, "forward broadcasts rank 0's buffers");
    double gd = max_diff(grads(local->parameters()), grads(ref->parameters()));
    check(gd <= 1e-6, "step " + std::to_string(step) + ": gradients differ by " + std::to_string(gd));
    opt_ref.step();
    opt.step();
  }
  double d = max_diff(local->parameters(), ref->parameters());
  check(d <= 1e-6, "parameters after 5 steps differ by " + std::to_string(d));
  dist::destroy_process_group();
  return g_failures ? 1 : 0;
}

/// Gradient accumulation over 2 micro-batches with no_sync on the first.
int run_no_sync() {
  init();
  Net ref = make_net(0);
  Net local = make_net(static_cast<uint64_t>(g_rank));
  dist::DistributedDataParallel ddp(local, dist::ProcessGroupPtr(),
                                    dist::DistributedDataParallelOptions().bucket_cap_mb(1e-6));
  ember::optim::SGD opt_ref(ref->parameters(), 0.1), opt(ddp->parameters(), 0.1);
  for (int step = 0; step < 3; ++step) {
    auto [x, y] = batch(step);
    // Reference: each rank's 2 micro-batches (rows of 2), their mean losses summed, the ranks averaged.
    opt_ref.zero_grad();
    Tensor loss_ref = ember::zeros({});
    for (int r = 0; r < g_size; ++r)
      for (int mb = 0; mb < 2; ++mb)
        loss_ref = loss_ref +
                   F::mse_loss(ref->forward(x.narrow(0, r * 4 + mb * 2, 2)), y.narrow(0, r * 4 + mb * 2, 2));
    (loss_ref / g_size).backward();

    opt.zero_grad();
    Tensor xr = half(x, g_rank), yr = half(y, g_rank);
    {
      auto guard = ddp->no_sync();
      F::mse_loss(ddp->forward(xr.narrow(0, 0, 2)), yr.narrow(0, 0, 2)).backward();
    }
    check(ddp->require_backward_grad_sync(), "no_sync's guard restores synchronization");
    // Inside no_sync the gradient is this rank's own micro-batch's, not an average (the
    // reference's parameters equal the replica's, so its gradient is the local one).
    auto own = ember::autograd::grad({F::mse_loss(ref->forward(xr.narrow(0, 0, 2)), yr.narrow(0, 0, 2))},
                                     ref->parameters());
    double ld = max_diff(grads(local->parameters()), own);
    check(ld <= 1e-6, "step " + std::to_string(step) + ": no_sync's gradient is not the local one (" +
                          std::to_string(ld) + ")");
    F::mse_loss(ddp->forward(xr.narrow(0, 2, 2)), yr.narrow(0, 2, 2)).backward();
    double gd = max_diff(grads(local->parameters()), grads(ref->parameters()));
    check(gd <= 1e-6,
          "step " + std::to_string(step) + ": accumulated gradients differ by " + std::to_string(gd));
    opt_ref.step();
    opt.step();
  }
  double d = max_diff(local->parameters(), ref->parameters());
  check(d <= 1e-6, "parameters after 3 accumulated steps differ by " + std::to_string(d));
  dist::destroy_process_group();
  return g_failures ? 1 : 0;
}

/// An unused layer (no rank uses it) and a layer only rank 0 uses at even steps.
int run_unused() {
  init();
  Net ref = make_net(0, true);
  Net local = make_net(static_cast<uint64_t>(g_rank), true);
  dist::DistributedDataParallel ddp(local, dist::ProcessGroupPtr(),
                                    dist::DistributedDataParallelOptions().find_unused_parameters(true));
  ember::optim::SGD opt_ref(ref->parameters(), 0.1), opt(ddp->parameters(), 0.1);
  for (int step = 0; step < 4; ++step) {
    auto [x, y] = batch(step);
    auto uses_extra = [&](int r) { return r == 0 && step % 2 == 0; };
    opt_ref.zero_grad();
    Tensor loss_ref = ember::zeros({});
    for (int r = 0; r < g_size; ++r) {
      ref->use_extra = uses_extra(r);
      loss_ref = loss_ref + F::mse_loss(ref->forward(half(x, r)), half(y, r));
    }
    (loss_ref / g_size).backward();

    opt.zero_grad();
    local->use_extra = uses_extra(g_rank);
    F::mse_loss(ddp->forward(half(x, g_rank)), half(y, g_rank)).backward();
    check(!local->unused->weight.grad().defined(), "a parameter no rank used keeps no gradient");
    check(local->extra->weight.grad().defined() == (step % 2 == 0),
          "a parameter one rank used gets the average on every rank");
    double gd = max_diff(grads(local->parameters()), grads(ref->parameters()));
    check(gd <= 1e-6, "step " + std::to_string(step) + ": gradients differ by " + std::to_string(gd));
    opt_ref.step();
    opt.step();
  }
  double d = max_diff(local->parameters(), ref->parameters());
  check(d <= 1e-6, "parameters with unused ones differ by " + std::to_string(d));
  dist::destroy_process_group();
  return g_failures ? 1 : 0;
}

/// Without find_unused_parameters an unused parameter makes the next forward raise.
int run_unused_without_flag() {
  init();
  Net local = make_net(0, true);
  dist::DistributedDataParallel ddp(local);
  auto [x, y] = batch(0);
  F::mse_loss(ddp->forward(half(x, g_rank)), half(y, g_rank)).backward();
  try {
    ddp->forward(half(x, g_rank));
    check(false, "the second forward should raise");
  } catch (const std::exception& e) {
    std::string msg = e.what();
    check(msg.find("Expected to have finished reduction in the prior iteration before starting a new one.") !=
                  std::string::npos &&
              msg.find("find_unused_parameters=True") != std::string::npos,
          "unexpected error: " + msg);
  }
  return g_failures ? 1 : 0;  // the group is left as is: the ranks' collectives no longer match
}

/// Rank 1 has an extra layer (6 parameters against 4): every rank raises c10d's text.
int run_mismatch_count() {
  init();
  Net local = make_net(0, false);
  std::shared_ptr<ember::nn::Module> m = local.ptr();
  if (g_rank == 1) local->register_module("more", ember::nn::Linear(2, 2));
  try {
    dist::DistributedDataParallel ddp(m);
    check(false, "construction should raise");
  } catch (const std::exception& e) {
    std::string expected =
        g_rank == 0 ? "DDP expects same model across all ranks, but Rank 0 has 4 params, while rank 1 "
                      "has inconsistent 6 params."
                    : "DDP expects same model across all ranks, but Rank 1 has 6 params, while rank 0 "
                      "has inconsistent 4 params.";
    check(std::string(e.what()).find(expected) != std::string::npos,
          std::string("unexpected error: ") + e.what());
  }
  return g_failures ? 1 : 0;
}

/// Same count, another shape on rank 1: rank 1 raises c10d's shape text.
int run_mismatch_shape() {
  init();
  ember::manual_seed(0);
  Net local(false, g_rank == 1 ? 5 : 8);
  try {
    dist::DistributedDataParallel ddp(local);
    check(g_rank == 0, "rank 1's construction should raise");
  } catch (const std::exception& e) {
    if (g_rank == 1)
      check(
          std::string(e.what()).find("[1]: params[0] in this process with sizes [5, 4] appears not to match "
                                     "sizes of the same param in process 0.") != std::string::npos,
          std::string("unexpected error: ") + e.what());
    // rank 0 passes the check and then fails its broadcast when rank 1 leaves: either is fine
  }
  return g_failures ? 1 : 0;
}

/// pytorch#33148 (uneven inputs): rank 0 runs 2 steps, rank 1 a third, while rank 0 stays
/// alive but out of the collective (as if evaluating). Rank 1's extra backward must raise the
/// gloo timeout as an Error within the group's timeout (here 2 s), never hang.
int run_uneven_inputs() {
  const auto timeout = std::chrono::seconds(2);
  dist::init_process_group("gloo", "env://", timeout);
  Net local = make_net(0);
  dist::DistributedDataParallel ddp(local);
  ember::optim::SGD opt(ddp->parameters(), 0.1);
  const int steps = g_rank == 0 ? 2 : 3;
  for (int step = 0; step < steps; ++step) {
    auto [x, y] = batch(step);
    opt.zero_grad();
    auto start = std::chrono::steady_clock::now();
    try {
      F::mse_loss(ddp->forward(half(x, g_rank)), half(y, g_rank)).backward();
      check(step < 2, "the extra step's backward should raise");
    } catch (const ember::Error& e) {
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::string msg = e.what();
      check(step == 2, "step " + std::to_string(step) + " raised: " + msg);
      check(msg.find("Timed out") != std::string::npos || msg.find("timed out") != std::string::npos,
            "the extra step's error names the timeout: " + msg);
      check(waited < 2.0 + 8.0, "raised " + std::to_string(waited) + " s after the step began");
      return g_failures ? 1 : 0;  // the group is left as is: the ranks' collectives no longer match
    }
    opt.step();
  }
  // Rank 0: busy elsewhere past rank 1's timeout, then leaves.
  if (g_rank == 0) std::this_thread::sleep_for(timeout + std::chrono::seconds(3));
  return g_failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_scenario(
      argc, argv, "ember_ddp_worker",
      {
          {"train", [] { return run_train(std::nullopt); }},
          {"train_buckets", [] { return run_train(1e-6); }},  // 1 byte: one parameter per bucket
          {"no_sync", [] { return run_no_sync(); }},
          {"unused", [] { return run_unused(); }},
          {"unused_without_flag", [] { return run_unused_without_flag(); }},
          {"mismatch_count", [] { return run_mismatch_count(); }},
          {"mismatch_shape", [] { return run_mismatch_shape(); }},
          {"uneven_inputs", [] { return run_uneven_inputs(); }},
      });
}
