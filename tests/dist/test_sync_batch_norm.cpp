// SyncBatchNorm: parity with single-process BatchNorm over the concatenated batch on 2 and 3
// real processes over gloo on loopback (the rank program tests/dist/workers/sync_bn_worker.cpp,
// spawned as the gloo tests spawn theirs), convert_sync_batchnorm across processes, and, in
// this process, the cases that need no peers: input checks in PyTorch's words, a one-rank
// group and evaluation mode behaving as BatchNorm, repr.
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

#include "ember/dist/process_group_gloo.h"
#include "ember/dist/sync_batch_norm.h"
#include "ember/dist/tcp_store.h"
#include "ember/ember.h"

extern char** environ;

using namespace ember;
using namespace ember::dist;

namespace {

// The worker program sits next to this test binary (EMBER_SYNC_BN_WORKER overrides).
std::string worker_path() {
  if (const char* p = std::getenv("EMBER_SYNC_BN_WORKER")) return p;
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  REQUIRE(n > 0);
  std::string self(buf.data(), static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "ember_sync_bn_worker";
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
    logs.push_back("/tmp/ember_sync_bn_test_" + std::to_string(getpid()) + "_" + std::to_string(r) + ".log");
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

// A one-rank gloo group in this process: SyncBatchNorm must then act as BatchNorm.
intrusive_ptr<ProcessGroup> one_rank_group() {
  auto store = std::make_shared<TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(5));
  ProcessGroupGloo::Options options;
  options.hostname = "127.0.0.1";
  options.timeout = std::chrono::seconds(5);
  return intrusive_ptr<ProcessGroup>(new ProcessGroupGloo(store, 0, 1, options));
}

}  // namespace

static bool skip_without_gloo() {
  if (ProcessGroupGloo::is_available()) return false;
  MESSAGE("ember was built without gloo: skipped");
  return true;
}

TEST_CASE(
    "SyncBatchNorm: outputs, gradients and running stats equal BatchNorm's on the whole batch, 2 and 3 "
    "ranks") {
  if (skip_without_gloo()) return;
  for (int world_size : {2, 3}) {
    CAPTURE(world_size);
    expect_all_passed(run_ranks("parity", world_size, world_size, std::chrono::seconds(60)));
  }
}

TEST_CASE("SyncBatchNorm: convert_sync_batchnorm on a nested Sequential, run on 2 ranks") {
  if (skip_without_gloo()) return;
  expect_all_passed(run_ranks("convert", 2, 2, std::chrono::seconds(60)));
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
