// DistributedDataParallel: training on 2 real rank processes over gloo on loopback (the rank
// program tests/dist/workers/ddp_worker.cpp, which checks itself against a single-process
// reference on the combined batch) — plain, one bucket per parameter, no_sync accumulation,
// unused parameters, and the model-mismatch errors; in-process: the bucket assignment, a
// one-rank DDP, autograd's final callbacks, and distributed_sampler's defaults.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ember/autograd/final_callback.h"
#include "ember/dist/distributed_data_parallel.h"
#include "ember/dist/distributed_sampler.h"
#include "ember/dist/process_group_gloo.h"
#include "ember/dist/tcp_store.h"
#include "ember/ember.h"
#include "op_check.h"
#include "rank_processes.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::test::dist_ranks;
using ember::test::check_error;

namespace {

void run_and_expect_pass(const std::string& scenario) {
  if (!ProcessGroupGloo::is_available()) {
    MESSAGE("ember was built without gloo: skipped");
    return;
  }
  auto results = run_ranks("ddp", scenario, 2, 2, std::chrono::seconds(60));
  for (size_t r = 0; r < results.size(); ++r) {
    INFO("scenario ", scenario, ", rank ", r, " stderr:\n", results[r].stderr_text);
    CHECK(results[r].exit_code == 0);
  }
}

/// n float32 tensors of the given element counts on the CPU.
std::vector<Tensor> floats(const std::vector<int64_t>& numels) {
  std::vector<Tensor> out;
  for (int64_t n : numels) out.push_back(empty({n}));
  return out;
}

}  // namespace

TEST_CASE("DistributedDataParallel: 5 SGD steps on 2 ranks match one process on the whole batch") {
  run_and_expect_pass("train");
}

TEST_CASE("DistributedDataParallel: one bucket per parameter (4 async allreduces in flight) gives the same") {
  run_and_expect_pass("train_buckets");
}

TEST_CASE("DistributedDataParallel: no_sync accumulates locally; the next backward averages the sum") {
  run_and_expect_pass("no_sync");
}

TEST_CASE("DistributedDataParallel: find_unused_parameters, a layer no rank uses and one only rank 0 uses") {
  run_and_expect_pass("unused");
}

TEST_CASE(
    "DistributedDataParallel: an unused parameter without find_unused_parameters raises PyTorch's error") {
  run_and_expect_pass("unused_without_flag");
}

TEST_CASE("DistributedDataParallel: ranks with different models raise c10d's texts") {
  run_and_expect_pass("mismatch_count");
  run_and_expect_pass("mismatch_shape");
}

TEST_CASE("compute_bucket_assignment_by_size: limits in order, per dtype, the caps") {
  const size_t KB = 1024;
  // 4 KiB tensors (1024 floats): a 6 KiB first bucket closes after 2, then 10 KiB after 3.
  auto t = floats({1024, 1024, 1024, 1024, 1024, 1024, 1024});
  auto a = compute_bucket_assignment_by_size(t, {6 * KB, 10 * KB});
  CHECK(a.bucket_indices == std::vector<std::vector<size_t>>{{0, 1}, {2, 3, 4}, {5, 6}});
  CHECK(a.per_bucket_size_limits == std::vector<size_t>{6 * KB, 10 * KB, 10 * KB});
  // DDP's order: reverse registration, so the small first bucket holds the last parameters.
  std::vector<size_t> rev{6, 5, 4, 3, 2, 1, 0};
  auto r = compute_bucket_assignment_by_size(t, {6 * KB, 10 * KB}, rev);
  CHECK(r.bucket_indices == std::vector<std::vector<size_t>>{{6, 5}, {4, 3, 2}, {1, 0}});
  // A tensor larger than the cap gets a bucket of its own; dtypes never share a bucket.
  std::vector<Tensor> mixed{empty({10}), empty({5000}), empty({10}, TensorOptions().dtype(kDouble)),
                            empty({10})};
  auto m = compute_bucket_assignment_by_size(mixed, {KB});
  CHECK(m.bucket_indices == std::vector<std::vector<size_t>>{{0, 1}, {2}, {3}});
  // One big limit: everything of one dtype in one bucket.
  auto one = compute_bucket_assignment_by_size(t, {size_t{1} << 40});
  CHECK(one.bucket_indices.size() == 1);
  CHECK(one.bucket_indices[0].size() == 7);
  check_error([&] { compute_bucket_assignment_by_size(t, {}); }, "bucket_size_limits is empty");
}

TEST_CASE("DistributedDataParallel: one rank in-process — buckets in reverse order, gradients unchanged") {
  if (!ProcessGroupGloo::is_available()) return;
  auto store = std::make_shared<TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(5));
  ProcessGroupGloo::Options options;
  options.hostname = "127.0.0.1";
  options.timeout = std::chrono::seconds(5);
  ProcessGroupPtr group(new ProcessGroupGloo(store, 0, 1, options));

  manual_seed(0);
  nn::Sequential net(nn::Linear(4, 300), nn::ReLU(), nn::Linear(300, 1000), nn::ReLU(), nn::Linear(1000, 2));
  auto ref = std::dynamic_pointer_cast<nn::SequentialImpl>(net->clone());
  // Registration order: w0 (4.8 KB) b0, w2 (1.2 MB) b2, w4 (8 KB) b4. Reverse: b4, w4, b2, w2 | b0, w0:
  // the first bucket closes once it reaches 1 MiB.
  DistributedDataParallel ddp(net, group);
  CHECK(ddp->bucket_indices() == std::vector<std::vector<size_t>>{{5, 4, 3, 2}, {1, 0}});
  DistributedDataParallel capped(nn::Linear(4, 4), group,
                                 DistributedDataParallelOptions().bucket_cap_mb(1e-6));
  CHECK(capped->bucket_indices() == std::vector<std::vector<size_t>>{{1}, {0}});

  Tensor x = randn({3, 4});
  ddp->forward(x).sum().backward();
  ref->forward(x).sum().backward();
  auto p = net->parameters(), q = ref->parameters();
  for (size_t i = 0; i < p.size(); ++i) CHECK(equal(p[i].grad(), q[i].grad()));
  // named_parameters carry the "module." prefix, as PyTorch's DDP state_dict keys do.
  CHECK(ddp->named_parameters().keys().front() == "module.0.weight");
}

// One rank reduces nothing (the average is the gradient itself), but keeps DDP's checks.
TEST_CASE("DistributedDataParallel: one rank — unused parameters, find_unused_parameters, no_sync") {
  if (!ProcessGroupGloo::is_available()) return;
  ProcessGroupPtr group = one_rank_group();
  // Two branches; the loss uses only the first.
  manual_seed(0);
  nn::Sequential used(nn::Linear(3, 2));
  nn::Linear unused(3, 2);
  struct TwoImpl : nn::Module {
    TwoImpl(nn::Sequential a, nn::Linear b) : a(register_module("a", a)), b(register_module("b", b)) {}
    Tensor forward(const Tensor& x) { return a->forward(x); }
    nn::Sequential a;
    nn::Linear b;
  };
  auto two = std::make_shared<TwoImpl>(used, unused);
  Tensor x = randn({4, 3});
  {
    DistributedDataParallel ddp(two, group, DistributedDataParallelOptions().find_unused_parameters(true));
    for (int step = 0; step < 2; ++step) {
      for (auto& p : two->parameters()) p.mutable_grad().reset();
      ddp->forward(x).sum().backward();
      CHECK(used->parameters()[0].grad().defined());
      CHECK_FALSE(unused->weight.grad().defined());  // no rank used it
    }
    // no_sync then a synced step: the gradients add up, as without DDP.
    for (auto& p : two->parameters()) p.mutable_grad().reset();
    {
      auto guard = ddp->no_sync();
      ddp->forward(x).sum().backward();
    }
    ddp->forward(x).sum().backward();
    Tensor twice = used->parameters()[0].grad().clone();
    used->parameters()[0].mutable_grad().reset();
    two->forward(x).sum().backward();
    CHECK(allclose(twice, used->parameters()[0].grad() * 2));
  }
  DistributedDataParallel strict(two, group);
  strict->forward(x).sum().backward();
  check_error([&] { strict->forward(x); }, "Expected to have finished reduction in the prior iteration");
}

TEST_CASE("queue_callback: runs after the last node, in order, and only during backward") {
  check_error([] { autograd::queue_callback([] {}); },
              "Final callbacks can only be installed during backward pass.");
  Tensor w = ones({2}, TensorOptions().requires_grad(true));
  std::vector<std::string> log;
  w.register_post_accumulate_grad_hook([&](Tensor& p) {
    log.push_back("hook");
    autograd::queue_callback([&, p] {
      log.push_back(p.grad().defined() ? "first" : "first-without-grad");
      autograd::queue_callback([&] { log.push_back("queued-by-callback"); });
    });
    autograd::queue_callback([&] { log.push_back("second"); });
  });
  (w * 3).sum().backward();
  CHECK(log == std::vector<std::string>{"hook", "first", "second", "queued-by-callback"});
  check_error([] { autograd::queue_callback([] {}); },
              "Final callbacks can only be installed during backward pass.");
}

TEST_CASE("distributed_sampler: num_replicas and rank default to the default group's") {
  check_error([] { distributed_sampler(10); }, "Default process group has not been initialized");
  auto s = distributed_sampler(10, 4, 3, false);
  CHECK(s->num_samples() == 3);
  CHECK(s->rank() == 3);
  check_error([] { distributed_sampler(10, 2, 2); }, "Invalid rank 2, rank should be in the interval [0, 1]");
}
