// ProcessGroupGloo: every collective on 2 and 4 real processes over loopback (the rank
// program tests/dist/workers/gloo_worker.cpp, spawned with torchrun's environment), a peer
// that never arrives and a peer that skips a collective (errors, not hangs), and bad input
// raising on the calling thread, in-process on a one-rank group.
//
// The ranks are separate programs started with posix_spawn (exec), not fork: this test binary
// already runs OpenMP and other threads, and a forked copy of it could deadlock.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

extern char** environ;

using namespace ember;
using namespace ember::dist;

namespace {

// The worker program sits next to this test binary (EMBER_GLOO_WORKER overrides).
std::string worker_path() {
  if (const char* p = std::getenv("EMBER_GLOO_WORKER")) return p;
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  REQUIRE(n > 0);
  std::string self(buf.data(), static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "ember_gloo_worker";
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct RankResult {
  int exit_code = -1;  // -1: killed at the deadline
  std::string stderr_text;
};

// Starts ranks 0..started-1 of a world of `world_size` running `scenario`, and waits for all
// of them up to `deadline`; ranks still running then are killed (and reported as -1).
std::vector<RankResult> run_ranks(const std::string& scenario, int world_size, int started,
                                  std::chrono::seconds deadline) {
  const std::string exe = worker_path();
  const int port = free_port();
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (int r = 0; r < started; ++r) {
    logs.push_back("/tmp/ember_gloo_test_" + std::to_string(getpid()) + "_" + std::to_string(r) + ".log");
    std::vector<std::string> env{"RANK=" + std::to_string(r),
                                 "WORLD_SIZE=" + std::to_string(world_size),
                                 "LOCAL_RANK=" + std::to_string(r),
                                 "MASTER_ADDR=127.0.0.1",
                                 "MASTER_PORT=" + std::to_string(port),
                                 "OMP_NUM_THREADS=1",
                                 "GLOO_SOCKET_IFNAME=lo"};
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      if (kv.rfind("RANK=", 0) && kv.rfind("WORLD_SIZE=", 0) && kv.rfind("MASTER_", 0) &&
          kv.rfind("LOCAL_RANK=", 0) && kv.rfind("OMP_NUM_THREADS=", 0) && kv.rfind("GLOO_SOCKET_IFNAME=", 0))
        env.push_back(kv);
    }
    std::vector<char*> envp;
    for (auto& kv : env) envp.push_back(kv.data());
    envp.push_back(nullptr);
    std::vector<std::string> args{exe, scenario};
    std::vector<char*> argv{args[0].data(), args[1].data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, logs.back().c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE_MESSAGE(rc == 0, "could not start ", exe);
    pids.push_back(pid);
  }
  std::vector<RankResult> results(static_cast<size_t>(started));
  std::vector<bool> done(static_cast<size_t>(started), false);
  auto end = std::chrono::steady_clock::now() + deadline;
  int remaining = started;
  while (remaining > 0 && std::chrono::steady_clock::now() < end) {
    for (int r = 0; r < started; ++r) {
      if (done[static_cast<size_t>(r)]) continue;
      int status = 0;
      if (waitpid(pids[static_cast<size_t>(r)], &status, WNOHANG) == pids[static_cast<size_t>(r)]) {
        done[static_cast<size_t>(r)] = true;
        --remaining;
        results[static_cast<size_t>(r)].exit_code =
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int r = 0; r < started; ++r) {
    if (!done[static_cast<size_t>(r)]) {
      kill(pids[static_cast<size_t>(r)], SIGKILL);
      waitpid(pids[static_cast<size_t>(r)], nullptr, 0);
    }
    results[static_cast<size_t>(r)].stderr_text = read_file(logs[static_cast<size_t>(r)]);
    std::remove(logs[static_cast<size_t>(r)].c_str());
  }
  return results;
}

void expect_all_passed(const std::vector<RankResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    INFO("rank ", r, " stderr:\n", results[r].stderr_text);
    CHECK(results[r].exit_code == 0);
  }
}

// A one-rank group in this process, for the checks that raise before any communication.
intrusive_ptr<ProcessGroup> one_rank_group() {
  auto store = std::make_shared<TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(5));
  ProcessGroupGloo::Options options;
  options.hostname = "127.0.0.1";
  options.timeout = std::chrono::seconds(5);
  return intrusive_ptr<ProcessGroup>(new ProcessGroupGloo(store, 0, 1, options));
}

}  // namespace

// A build without libgloo-dev: the group cannot be made, and says why.
static bool skip_without_gloo() {
  if (ProcessGroupGloo::is_available()) return false;
  MESSAGE("ember was built without gloo: skipped");
  return true;
}

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
    expect_all_passed(run_ranks("collectives", world_size, world_size, std::chrono::seconds(30)));
  }
}

TEST_CASE("ProcessGroupGloo: a peer that skips a collective makes the Work raise after the timeout") {
  if (skip_without_gloo()) return;
  auto results = run_ranks("collective_timeout", 2, 2, std::chrono::seconds(15));
  expect_all_passed(results);
  CHECK(results[0].stderr_text.find("allreduce raised") != std::string::npos);
}

TEST_CASE("ProcessGroupGloo: a peer that never joins makes init_process_group raise, not hang") {
  if (skip_without_gloo()) return;
  auto results = run_ranks("no_peer", 2, 1, std::chrono::seconds(15));
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
    CHECK_THROWS_WITH_AS(init_process_group("nccl", "env://"), "Distributed package doesn't have NCCL built in",
                         ember::Error);
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
