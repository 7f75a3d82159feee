// ProcessGroupGloo: every collective on 2 and 4 real processes over loopback (the rank
// program tests/dist/workers/gloo_worker.cpp, spawned with torchrun's environment), a peer
// that never arrives and a peer that skips a collective (errors, not hangs), and bad input
// raising on the calling thread, in-process on a one-rank group.
// The processes: tests/dist/rank_processes.h.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ember/dist/distributed.h"
#include "ember/dist/process_group_gloo.h"
#include "ember/dist/process_group_nccl.h"
#include "ember/dist/tcp_store.h"
#include "ember/ember.h"
#include "rank_processes.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::test::dist_ranks;

TEST_CASE("ProcessGroupGloo: without gloo, creating the group raises torch.distributed's error") {
  if (ProcessGroupGloo::is_available()) return;
  auto store = std::make_shared<TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(5));
  CHECK_THROWS_WITH_AS(ProcessGroupGloo(store, 0, 1),
                       doctest::Contains("Distributed package doesn't have Gloo built in"), ember::Error);
}

TEST_CASE("ProcessGroupGloo: every collective, dtype, async Work and new_group on 2 and 4 processes") {
  if (skip_without_gloo()) return;
  for (int world_size : {2, 4}) {
    CAPTURE(world_size);
    expect_all_passed(run_ranks("gloo", "collectives", world_size, world_size, std::chrono::seconds(30)));
  }
}

TEST_CASE("ProcessGroupGloo: a peer that skips a collective makes the Work raise after the timeout") {
  if (skip_without_gloo()) return;
  auto results = run_ranks("gloo", "collective_timeout", 2, 2, std::chrono::seconds(15));
  expect_all_passed(results);
  CHECK(results[0].stderr_text.find("allreduce raised") != std::string::npos);
}

TEST_CASE("ProcessGroupGloo: a peer that never joins makes init_process_group raise, not hang") {
  if (skip_without_gloo()) return;
  auto results = run_ranks("gloo", "no_peer", 2, 1, std::chrono::seconds(15));
  expect_all_passed(results);
}

TEST_CASE("ProcessGroupGloo: one rank, results and bad input in c10d's words") {
  if (skip_without_gloo()) return;
  auto pg = one_rank_group();
  CHECK(pg->getBackendName() == "gloo");
  CHECK(pg->rank() == 0);
  CHECK(pg->size() == 1);

  std::vector<Tensor> t{ember::arange(6, TensorOptions().dtype(kFloat))};
  AllreduceOptions avg;
  avg.reduceOp = ReduceOp::AVG;
  CHECK(pg->allreduce(t, avg)->wait());
  CHECK(ember::equal(t[0], ember::arange(6, TensorOptions().dtype(kFloat))));

  std::vector<Tensor> none;
  CHECK_THROWS_WITH_AS(pg->allreduce(none), "ProcessGroupGloo::allreduce: requires non-empty tensor list",
                       ember::Error);
  std::vector<Tensor> shorts{ember::zeros({3}, TensorOptions().dtype(kShort))};
  CHECK_THROWS_WITH_AS(pg->allreduce(shorts), "Invalid scalar type", ember::Error);
  std::vector<Tensor> mixed{ember::zeros({3}), ember::zeros({4})};
  CHECK_THROWS_WITH_AS(pg->allreduce(mixed),
                       "ProcessGroupGloo::allreduce: invalid tensor size at index 1 (expected (3), got (4))",
                       ember::Error);
  std::vector<Tensor> types{ember::zeros({3}), ember::zeros({3}, TensorOptions().dtype(kDouble))};
  CHECK_THROWS_WITH_AS(
      pg->allreduce(types),
      "ProcessGroupGloo::allreduce: invalid tensor type at index 1 (expected Float, got Double)",
      ember::Error);
  AllreduceOptions band;
  band.reduceOp = ReduceOp::BAND;
  std::vector<Tensor> floats{ember::zeros({3})};
  CHECK_THROWS_WITH_AS(pg->allreduce(floats, band), "Cannot use ReduceOp.BAND with non-integral dtype",
                       ember::Error);
  std::vector<Tensor> ints{ember::full({3}, 6, TensorOptions().dtype(kInt))};
  CHECK(pg->allreduce(ints, band)->wait());
  CHECK(ints[0].sum().item<int64_t>() == 18);

  // AVG divides the sum: an integer tensor cannot hold the quotient (PyTorch's error), and
  // it surfaces from wait().
  std::vector<Tensor> int_avg{ember::ones({3}, TensorOptions().dtype(kInt))};
  CHECK_THROWS_AS(pg->allreduce(int_avg, avg)->wait(), ember::Error);

  BroadcastOptions bad_root;
  bad_root.rootRank = 3;
  CHECK_THROWS_WITH_AS(pg->broadcast(t, bad_root), "ProcessGroupGloo::broadcast: invalid root rank: 3",
                       ember::Error);
  ReduceOptions bad_dst;
  bad_dst.rootRank = 5;
  CHECK_THROWS_WITH_AS(pg->reduce(t, bad_dst), "ProcessGroupGloo::reduce: invalid root rank: 5",
                       ember::Error);

  std::vector<std::vector<Tensor>> two_outputs{{ember::zeros({6}), ember::zeros({6})}};
  CHECK_THROWS_WITH_AS(
      pg->allgather(two_outputs, t),
      "ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length 1, got 2)",
      ember::Error);
  std::vector<std::vector<Tensor>> wrong_size{{ember::zeros({4})}};
  CHECK_THROWS_WITH_AS(pg->allgather(wrong_size, t),
                       "ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (6), got (4))",
                       ember::Error);
  std::vector<Tensor> rs_out{ember::zeros({6})};
  std::vector<std::vector<Tensor>> rs_in{{ember::ones({6}), ember::ones({6})}};
  CHECK_THROWS_WITH_AS(pg->reduce_scatter(rs_out, rs_in),
                       "invalid input tensor list size, must be world size", ember::Error);

  std::vector<Tensor> two{ember::zeros({3}), ember::zeros({3})};
  CHECK_THROWS_WITH_AS(pg->send(two, 0, 0), "ProcessGroupGloo::send takes a single tensor", ember::Error);
  CHECK_THROWS_WITH_AS(
      pg->send(t, 0, 0),
      "Invalid destination rank: destination rank should not be the same as the rank of the current "
      "process.",
      ember::Error);
  CHECK_THROWS_WITH_AS(pg->recv(t, 4, 0), "Invalid source rank: 4", ember::Error);

  // A collective with nothing in flight still runs after the errors: the checks sent nothing.
  CHECK(pg->barrier()->wait(std::chrono::seconds(5)));
}

TEST_CASE("init_process_group: file:// rendezvous, the default group's API, and its errors") {
  if (skip_without_gloo()) return;
  CHECK_FALSE(is_initialized());
  CHECK_THROWS_WITH_AS(
      get_rank(),
      "Default process group has not been initialized, please make sure to call init_process_group.",
      ember::Error);
  if (!ProcessGroupNCCL::is_available())  // with NCCL: tests/dist/test_nccl_plan.cpp
    CHECK_THROWS_WITH_AS(init_process_group("nccl", "env://"),
                         "Distributed package doesn't have NCCL built in", ember::Error);
  std::string path = "/tmp/ember_gloo_file_store_" + std::to_string(getpid());
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(
      init_process_group("gloo", "file://" + path + "?rank=0"),
      "Error initializing torch.distributed using file:// rendezvous: world size parameter missing",
      ember::Error);
  init_process_group("gloo", "file://" + path + "?rank=0&world_size=1", std::chrono::seconds(5));
  CHECK(is_initialized());
  CHECK(get_rank() == 0);
  CHECK(get_world_size() == 1);
  CHECK(get_backend() == "gloo");
  CHECK_THROWS_WITH_AS(init_process_group("gloo", "file://" + path + "?rank=0&world_size=1"),
                       "trying to initialize the default process group twice!", ember::Error);
  Tensor t = ember::full({4}, 3.0);
  CHECK_FALSE(all_reduce(t, ReduceOp::MAX));  // synchronous: no Work
  auto work = all_reduce(t, ReduceOp::SUM, /*async_op=*/true);
  REQUIRE(work);
  CHECK(work->wait(std::chrono::seconds(5)));
  CHECK(work->is_completed());
  CHECK(ember::equal(t, ember::full({4}, 3.0)));
  auto sub = new_group({0});
  REQUIRE(sub);
  CHECK(sub->size() == 1);
  CHECK_FALSE(barrier(false, sub));
  destroy_process_group();
  CHECK_FALSE(is_initialized());
  std::remove(path.c_str());
}
