// SyncBatchNorm: parity with single-process BatchNorm over the concatenated batch on 2 and 3
// real processes over gloo on loopback (the rank program tests/dist/workers/sync_bn_worker.cpp,
// spawned as the gloo tests spawn theirs), convert_sync_batchnorm across processes, and, in
// this process, the cases that need no peers: input checks in PyTorch's words, a one-rank
// group and evaluation mode behaving as BatchNorm, repr.
//
// The ranks are separate programs started with posix_spawn (exec), not fork: this test binary
// already runs OpenMP and other threads, and a forked copy of it could deadlock.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ember/dist/process_group_gloo.h"
#include "ember/dist/sync_batch_norm.h"
#include "ember/dist/tcp_store.h"
#include "ember/ember.h"
#include "rank_processes.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::test::dist_ranks;

TEST_CASE(
    "SyncBatchNorm: outputs, gradients and running stats equal BatchNorm's on the whole batch, 2 and 3 "
    "ranks") {
  if (skip_without_gloo()) return;
  for (int world_size : {2, 3}) {
    CAPTURE(world_size);
    expect_all_passed(run_ranks("sync_bn", "parity", world_size, world_size, std::chrono::seconds(60)));
  }
}

TEST_CASE("SyncBatchNorm: convert_sync_batchnorm on a nested Sequential, run on 2 ranks") {
  if (skip_without_gloo()) return;
  expect_all_passed(run_ranks("sync_bn", "convert", 2, 2, std::chrono::seconds(60)));
}

TEST_CASE("SyncBatchNorm: input checks in PyTorch's words") {
  nn::SyncBatchNorm bn(3);
  CHECK_THROWS_WITH_AS(bn->forward(ember::randn({3})), "expected at least 2D input (got 1D input)",
                       ember::Error);
  nn::SyncBatchNorm none(0);
  CHECK_THROWS_WITH_AS(none->forward(ember::randn({2, 0})),
                       "SyncBatchNorm number of input channels should be non-zero", ember::Error);
}

TEST_CASE("SyncBatchNorm: without a group, with a one-rank group, and in eval mode it is BatchNorm") {
  ember::manual_seed(3);
  Tensor x = ember::randn({4, 2, 3, 3});
  auto expect_batch_norm = [&](nn::SyncBatchNorm& sync) {
    nn::BatchNorm2d ref(2);
    Tensor xs = x.clone().requires_grad_(true), xr = x.clone().requires_grad_(true);
    Tensor ys = sync->forward(xs), yr = ref->forward(xr);
    CHECK(ember::allclose(ys, yr, 1e-6, 1e-6));
    (ys * ys).sum().backward();
    (yr * yr).sum().backward();
    CHECK(ember::allclose(xs.grad(), xr.grad(), 1e-5, 1e-6));
    CHECK(ember::allclose(sync->weight.grad(), ref->weight.grad(), 1e-5, 1e-5));
    CHECK(ember::allclose(sync->running_var, ref->running_var, 1e-6, 1e-6));
    sync->eval();
    ref->eval();
    CHECK(ember::allclose(sync->forward(x), ref->forward(x), 1e-6, 1e-6));
  };
  nn::SyncBatchNorm no_group(2);
  expect_batch_norm(no_group);
  if (skip_without_gloo()) return;
  nn::SyncBatchNorm one_rank(nn::SyncBatchNormOptions(2).process_group(one_rank_group()));
  expect_batch_norm(one_rank);
}

TEST_CASE("SyncBatchNorm: repr, parameters and buffers as PyTorch's") {
  nn::SyncBatchNorm bn(nn::SyncBatchNormOptions(8).momentum(std::nullopt).affine(false));
  std::ostringstream s;
  s << *bn;
  CHECK(s.str() == "SyncBatchNorm(8, eps=1e-05, momentum=None, affine=False, track_running_stats=True)");
  CHECK(bn->parameters().empty());
  CHECK(bn->named_buffers().keys() ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
}
