// Runs a dist test's ranks as real processes on loopback: the rank program
// tests/dist/workers/<name>_worker.cpp (built as ember_<name>_worker next to the test binary;
// EMBER_<NAME>_WORKER overrides the path) started world_size times with torchrun's
// environment, each rank's stderr kept for the report, and every rank killed at a deadline so
// a test never hangs.
//
// The ranks are separate programs started with posix_spawn (exec), not fork: the test binary
// already runs OpenMP and other threads, and a forked copy of it could deadlock.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ember/dist/process_group_gloo.h"
#include "ember/dist/tcp_store.h"

extern char** environ;

namespace ember::test::dist_ranks {

/// ember_<name>_worker beside this test binary, or $EMBER_<NAME>_WORKER.
inline std::string worker_path(const std::string& name) {
  std::string variable = "EMBER_" + name + "_WORKER";
  std::transform(variable.begin(), variable.end(), variable.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  if (const char* p = std::getenv(variable.c_str())) return p;
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  REQUIRE(n > 0);
  std::string self(buf.data(), static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "ember_" + name + "_worker";
}

/// A port nobody listens on now (the kernel's pick for a bound, then closed, socket).
inline int free_port() {
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

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct RankResult {
  int exit_code = -1;  // -1: killed at the deadline
  std::string stderr_text;
};

/// The environment of rank r: torchrun's variables (loopback master on `port`), one OpenMP
/// thread, gloo on the loopback interface, and the rest of this process's environment.
inline std::vector<std::string> rank_environment(int r, int world_size, int port) {
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
  return env;
}

/// Starts `exe scenario` as rank r with stderr to `log` and stdout discarded.
inline pid_t spawn_rank(const std::string& exe, const std::string& scenario, int r, int world_size, int port,
                        const std::string& log) {
  std::vector<std::string> env = rank_environment(r, world_size, port);
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<std::string> args{exe, scenario};
  std::vector<char*> argv{args[0].data(), args[1].data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "could not start ", exe);
  return pid;
}

/// Starts ranks 0..started-1 of a world of `world_size` (started < world_size: the others
/// never arrive) of worker `name` running `scenario`, and waits for all of them up to
/// `deadline`; ranks still running then are killed (and reported as -1).
inline std::vector<RankResult> run_ranks(const std::string& name, const std::string& scenario, int world_size,
                                         int started, std::chrono::seconds deadline) {
  const std::string exe = worker_path(name);
  const int port = free_port();
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (int r = 0; r < started; ++r) {
    logs.push_back("/tmp/ember_" + name + "_test_" + std::to_string(getpid()) + "_" + std::to_string(r) +
                   ".log");
    pids.push_back(spawn_rank(exe, scenario, r, world_size, port, logs.back()));
  }
  std::vector<RankResult> results(pids.size());
  std::vector<bool> done(pids.size(), false);
  const auto end = std::chrono::steady_clock::now() + deadline;
  size_t remaining = pids.size();
  while (remaining > 0 && std::chrono::steady_clock::now() < end) {
    for (size_t r = 0; r < pids.size(); ++r) {
      int status = 0;
      if (done[r] || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      done[r] = true;
      --remaining;
      results[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (size_t r = 0; r < pids.size(); ++r) {
    if (!done[r]) {
      kill(pids[r], SIGKILL);
      waitpid(pids[r], nullptr, 0);
    }
    results[r].stderr_text = read_file(logs[r]);
    std::remove(logs[r].c_str());
  }
  return results;
}

/// Every rank exited 0 (else the rank's stderr is in the report).
inline void expect_all_passed(const std::vector<RankResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    INFO("rank ", r, " stderr:\n", results[r].stderr_text);
    CHECK(results[r].exit_code == 0);
  }
}

/// A one-rank gloo group in this process, for the checks that need a group but no peers.
inline intrusive_ptr<dist::ProcessGroup> one_rank_group() {
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, 1, true, std::chrono::seconds(5));
  dist::ProcessGroupGloo::Options options;
  options.hostname = "127.0.0.1";
  options.timeout = std::chrono::seconds(5);
  return intrusive_ptr<dist::ProcessGroup>(new dist::ProcessGroupGloo(store, 0, 1, options));
}

/// A build without libgloo-dev cannot make a gloo group: the test says so and skips.
inline bool skip_without_gloo() {
  if (dist::ProcessGroupGloo::is_available()) return false;
  MESSAGE("ember was built without gloo: skipped");
  return true;
}

}  // namespace ember::test::dist_ranks
