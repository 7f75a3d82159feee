// The rendezvous stores (dist/): TCPStore over real loopback sockets with threads and a
// forked process as clients, FileStore shared by two processes, PrefixStore isolation.
// Expected values are c10d's, checked by hand against torch.distributed (2.9.1): error texts,
// compare_set's answers, the "init/" and "refcount/" keys num_keys counts.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ember/core/error.h"
#include "ember/dist/dist.h"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using ember::dist::FileStore;
using ember::dist::PrefixStore;
using ember::dist::Store;
using ember::dist::TCPStore;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kHost = "127.0.0.1";

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Runs f, expecting ember::Error; returns its message ("" when nothing was thrown).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}

// Forks a child that runs f and exits with its result (99 on an exception); never returns
// into the test runner in the child.
pid_t spawn(const std::function<int()>& f) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 99;
    try {
      code = f();
    } catch (...) {
    }
    ::_exit(code);
  }
  return pid;
}

// The child's exit status; kills it and returns -1 when it has not ended within `limit`.
int join_child(pid_t pid, std::chrono::milliseconds limit) {
  auto start = Clock::now();
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() - start > limit) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

// A port that nothing listens on (bound, read and released).
int unused_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string temp_path(const std::string& tag) {
  static std::atomic<int> n{0};
  auto p = std::filesystem::temp_directory_path() /
           ("ember_filestore_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  std::filesystem::remove(p);
  return p.string();
}

// The semantics every store shares; `base_keys`: the store's own keys num_keys counts.
void check_core_semantics(Store& s, int64_t base_keys) {
  CHECK(s.num_keys() == base_keys);
  s.set("a", "1");
  CHECK(s.get_string("a") == "1");
  s.set("a", "xyz");  // overwrite
  CHECK(s.get_string("a") == "xyz");
  // Values are bytes: zeros and high bytes survive.
  std::vector<uint8_t> raw = {0, 255, 0, 7};
  s.set("raw", raw);
  CHECK(s.get("raw") == raw);
  s.set("empty", std::vector<uint8_t>{});
  CHECK(s.get("empty").empty());

  CHECK(s.add("c", 5) == 5);
  CHECK(s.add("c", 2) == 7);
  CHECK(s.add("c", -10) == -3);
  CHECK(s.get_string("c") == "-3");  // stored as decimal text, as c10d
  s.set("n", "40");
  CHECK(s.add("n", 2) == 42);
  CHECK(!error_of([&] { s.add("a", 1); }).empty());  // "xyz" is no integer

  // compare_set, c10d's answers (torch 2.9.1): absent + "" expected sets; mismatch returns the
  // current value; absent + non-empty expected returns `expected` and sets nothing.
  CHECK(s.compare_set("x", "", "v") == "v");
  CHECK(s.compare_set("x", "zz", "w") == "v");
  CHECK(s.get_string("x") == "v");
  CHECK(s.compare_set("x", "v", "w2") == "w2");
  CHECK(s.get_string("x") == "w2");
  CHECK(s.compare_set("y", "q", "w") == "q");
  CHECK(!s.check({"y"}));

  CHECK(s.check({"a", "c", "x"}));
  CHECK(!s.check({"a", "nope"}));
  CHECK(s.check({}));
  CHECK(s.num_keys() == base_keys + 6);  // a raw empty c n x
  CHECK(s.delete_key("c"));
  CHECK(!s.delete_key("c"));
  CHECK(!s.check({"c"}));
  CHECK(s.num_keys() == base_keys + 5);
  CHECK(s.add("c", 1) == 1);  // a deleted counter starts again from 0
}

}  // namespace

TEST_CASE("TCPStore: set/get/add/compare_set/check/delete_key/num_keys") {
  TCPStore master(kHost, 0, 1, true, 2s);
  CHECK(master.port() > 0);
  CHECK(master.is_master());
  check_core_semantics(master, 1);  // "init/": the one worker registered
  // A second client sees the master's keys.
  TCPStore client(kHost, master.port(), 1, false, 2s);
  CHECK(!client.is_master());
  CHECK(client.get_string("a") == "xyz");
  CHECK(client.add("c", 1) == 2);
  // Without wait_for_workers nothing is registered.
  TCPStore bare(kHost, 0, 1, true, 2s, false);
  CHECK(bare.num_keys() == 0);
}

TEST_CASE("TCPStore: large values cross in pieces") {
  TCPStore master(kHost, 0, -1, true, 5s);
  TCPStore client(kHost, master.port(), -1, false, 5s);
  std::vector<uint8_t> big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 131 + 7);
  client.set("big", big);
  CHECK(master.get("big") == big);
}

TEST_CASE("TCPStore: timeouts") {
  TCPStore master(kHost, 0, -1, true, 2s);
  CHECK(master.get_timeout() == 2000ms);
  master.set_timeout(300ms);
  CHECK(master.get_timeout() == 300ms);

  auto t0 = Clock::now();
  auto msg = error_of([&] { master.get("missing"); });
  double took = seconds_since(t0);
  CHECK(msg == "wait timeout after 300ms, keys: /missing");
  CHECK(took >= 0.3);
  CHECK(took < 1.5);

  t0 = Clock::now();
  msg = error_of([&] { master.wait({"a", "b"}, 200ms); });
  took = seconds_since(t0);
  CHECK(msg == "wait timeout after 200ms, keys: /a, /b");
  CHECK(took >= 0.2);
  CHECK(took < 1.0);

  // The connection is still good after a timed-out wait.
  master.set("a", "1");
  CHECK(master.get_string("a") == "1");
  CHECK(TCPStore(kHost, 0, -1, true).get_timeout() == Store::kDefaultTimeout);
  CHECK(Store::kDefaultTimeout == 300s);
}

TEST_CASE("TCPStore: a wait returns when another client sets the key") {
  TCPStore master(kHost, 0, -1, true, 5s);
  std::thread setter([port = master.port()] {
    TCPStore c(kHost, port, -1, false, 5s);
    std::this_thread::sleep_for(150ms);
    c.set("k1", "hello");
    std::this_thread::sleep_for(50ms);
    c.add("k2", 3);
  });
  auto t0 = Clock::now();
  master.wait({"k1", "k2"});
  double took = seconds_since(t0);
  CHECK(took >= 0.15);
  CHECK(took < 2.0);
  CHECK(master.get_string("k1") == "hello");
  CHECK(master.get_string("k2") == "3");
  setter.join();

  // get blocks for the key too; compare_set setting a key releases a waiter as well.
  std::thread cas([port = master.port()] {
    TCPStore c(kHost, port, -1, false, 5s);
    std::this_thread::sleep_for(100ms);
    c.compare_set("k3", "", "cas");
  });
  CHECK(master.get_string("k3") == "cas");
  cas.join();
}

TEST_CASE("TCPStore: concurrent clients add exactly") {
  constexpr int kClients = 8, kAdds = 1000;
  TCPStore master(kHost, 0, -1, true, 10s);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, port = master.port()] {
      try {
        TCPStore c(kHost, port, -1, false, 10s);
        for (int j = 0; j < kAdds; ++j) c.add("counter", 1);
        c.add("done", 1);
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(master.get_string("counter") == std::to_string(kClients * kAdds));
  CHECK(master.add("done", 0) == kClients);
}

TEST_CASE("TCPStore: wait_for_workers rendezvous of world_size processes") {
  int port = unused_port();
  std::vector<std::thread> workers;
  std::atomic<int> ok{0};
  // Workers start before the master: they retry the connection until it is up.
  for (int i = 0; i < 2; ++i) {
    workers.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50 + 100 * i));
      TCPStore c(kHost, port, 3, false, 5s);
      c.set("rank" + std::to_string(i + 1), "up");
      ++ok;
    });
  }
  auto t0 = Clock::now();
  TCPStore master(kHost, port, 3, true, 5s);
  CHECK(seconds_since(t0) >= 0.14);  // returned only once the slower worker joined
  CHECK(!master.check({"init/"}));   // user keys carry "/": not the store's own "init/"
  for (auto& t : workers) t.join();
  CHECK(ok == 2);
  master.wait({"rank1", "rank2"}, 2s);
  CHECK(master.num_keys() == 3);  // "init/" and the two ranks

  // Nobody joins: c10d's message after the timeout.
  t0 = Clock::now();
  auto msg = error_of([] { TCPStore lonely(kHost, 0, 2, true, 300ms); });
  CHECK(msg == "Timed out after 1 seconds waiting for clients. 1/2 clients joined.");
  CHECK(seconds_since(t0) >= 0.3);
  CHECK(seconds_since(t0) < 1.5);
}

TEST_CASE("TCPStore: clients get an error, not a hang, when the master goes away") {
  auto master = std::make_unique<TCPStore>(kHost, 0, -1, true, 10s);
  TCPStore client(kHost, master->port(), -1, false, 10s);
  TCPStore bystander(kHost, master->port(), -1, false, 10s);
  client.set("k", "v");
  std::string msg;
  double took = 0;
  std::thread waiter([&] {
    auto t0 = Clock::now();
    msg = error_of([&] { client.wait({"never"}); });
    took = seconds_since(t0);
  });
  std::this_thread::sleep_for(100ms);
  master.reset();  // the server stops and closes every connection
  waiter.join();
  CHECK(
      msg ==
      "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?");
  CHECK(took < 3.0);
  // Every later request fails too, promptly.
  auto t0 = Clock::now();
  CHECK(error_of([&] { client.get("k"); }) ==
        "TCPStore: the connection to the server was lost by an earlier error");
  CHECK(seconds_since(t0) < 3.0);
  // A client that had not noticed yet fails on its next request.
  CHECK(!error_of([&] { bystander.set("k", "w"); }).empty());
}

TEST_CASE("TCPStore: connecting to a port nobody listens on raises after the timeout") {
  int port = unused_port();
  auto t0 = Clock::now();
  auto msg = error_of([&] { TCPStore c(kHost, port, -1, false, 300ms); });
  double took = seconds_since(t0);
  CHECK(msg == "The client socket has timed out after 300ms while trying to connect to (127.0.0.1, " +
                   std::to_string(port) + ").");
  CHECK(took >= 0.25);
  CHECK(took < 1.5);
  CHECK(error_of([] { TCPStore c(kHost, 0, -1, false, 100ms); }) ==
        "TCPStore: a client needs the server's port (0 is only for the master)");
}

TEST_CASE("TCPStore: a server that never answers: Socket Timeout, not a hang") {
  // A bare listening socket: the kernel completes the connection, nobody replies.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  TCPStore c(kHost, ntohs(a.sin_port), -1, false, 200ms);
  auto t0 = Clock::now();
  CHECK(error_of([&] { c.set("k", "v"); }) == "Socket Timeout");
  CHECK(seconds_since(t0) >= 0.2);
  CHECK(seconds_since(t0) < 1.0);
  ::close(fd);
}

TEST_CASE("TCPStore: a forked process as a client") {
  TCPStore master(kHost, 0, 2, true, 5s, false);
  int port = master.port();
  pid_t pid = spawn([port] {
    TCPStore c(kHost, port, 2, false, 5s);
    c.wait({"go"});
    if (c.get_string("go") != "now") return 2;
    c.add("count", 10);
    c.set("child/done", "ok");
    return 0;
  });
  std::this_thread::sleep_for(50ms);
  master.add("count", 1);
  master.set("go", "now");
  CHECK(master.get_string("child/done") == "ok");
  CHECK(master.add("count", 0) == 11);
  CHECK(join_child(pid, 5s) == 0);
}

TEST_CASE("FileStore: core semantics and timeouts") {
  auto path = temp_path("core");
  {
    FileStore s(path, 1);
    s.set_timeout(200ms);
    check_core_semantics(s, 1);  // "refcount/"
    auto t0 = Clock::now();
    CHECK(error_of([&] { s.get("k"); }) == "Timeout waiting for key: k after 200 ms");
    CHECK(seconds_since(t0) >= 0.2);
    CHECK(seconds_since(t0) < 1.0);
    t0 = Clock::now();
    CHECK(error_of([&] { s.wait({"k"}, 100ms); }) == "Wait timeout");
    CHECK(seconds_since(t0) >= 0.1);
    CHECK(seconds_since(t0) < 1.0);
    // A second store on the same file, in this process, sees the same keys.
    FileStore t(path, 1);
    CHECK(t.get_string("x") == "w2");
    CHECK(t.add("c", 1) == 2);
    CHECK(s.add("c", 1) == 3);
  }
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("FileStore: two processes, then the file is removed") {
  auto path = temp_path("fork");
  FileStore parent(path, 2);
  parent.set_timeout(5s);
  pid_t pid = spawn([path] {
    FileStore s(path, 2);
    s.set_timeout(5s);
    s.wait({"go"});
    for (int i = 0; i < 200; ++i) s.add("counter", 1);
    s.set("child", "done");
    return s.get_string("go") == "now" ? 0 : 2;
  });
  parent.set("go", "now");
  for (int i = 0; i < 200; ++i) parent.add("counter", 1);
  parent.wait({"child"});
  CHECK(join_child(pid, 10s) == 0);
  CHECK(parent.get_string("counter") == "400");
  CHECK(parent.get_string("child") == "done");
  // The child's store closed: one of two workers done, and the parent still has it open.
  CHECK(std::filesystem::exists(path));
}

TEST_CASE("FileStore: the file goes when the last store closes") {
  auto path = temp_path("cleanup");
  auto a = std::make_unique<FileStore>(path, 3);
  auto b = std::make_unique<FileStore>(path, 3);
  a->set("k", "v");
  a.reset();
  CHECK(std::filesystem::exists(path));
  CHECK(b->get_string("k") == "v");
  b.reset();
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("PrefixStore: prefixes isolate keys") {
  auto master = std::make_shared<TCPStore>(kHost, 0, -1, true, 2s);
  PrefixStore a("a", master), b("b", master);
  a.set("x", "1");
  b.set("x", "2");
  CHECK(a.get_string("x") == "1");
  CHECK(b.get_string("x") == "2");
  CHECK(master->get_string("a/x") == "1");
  CHECK(a.add("n", 3) == 3);
  CHECK(b.add("n", 5) == 5);
  CHECK(a.check({"x", "n"}));
  CHECK(!a.check({"y"}));
  b.set("y", "only b");
  CHECK(!a.check({"y"}));
  CHECK(a.compare_set("x", "1", "10") == "10");
  CHECK(b.get_string("x") == "2");
  CHECK(a.delete_key("x"));
  CHECK(b.check({"x"}));
  CHECK(a.num_keys() == master->num_keys());  // c10d: the underlying store's count
  // Nested prefixes join with "/", and waits go through with their timeout.
  auto nested = std::make_shared<PrefixStore>("inner", std::make_shared<PrefixStore>("outer", master));
  nested->set("k", "v");
  CHECK(master->get_string("outer/inner/k") == "v");
  a.set_timeout(200ms);
  CHECK(master->get_timeout() == 200ms);
  CHECK(error_of([&] { a.get("missing"); }) == "wait timeout after 200ms, keys: /a/missing");

  // Over a FileStore too.
  auto path = temp_path("prefix");
  {
    auto fs = std::make_shared<FileStore>(path, 1);
    PrefixStore p("p", fs), q("q", fs);
    p.set("k", "1");
    CHECK(!q.check({"k"}));
    CHECK(fs->get_string("p/k") == "1");
  }
  CHECK(!std::filesystem::exists(path));
}
