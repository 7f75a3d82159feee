// TCPStore: the client, which every process runs (the master also runs the server,
// tcp_store_server.cpp). The wire format is in tcp_store_wire.h.
#include "ember/dist/tcp_store.h"

#include "ember/core/error.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>

#include "ember/dist/tcp_store_server.h"
#include "ember/dist/tcp_store_wire.h"

namespace ember::dist {

using namespace tcp_wire;

// ---- the client ----------------------------------------------------------------------------

namespace {

// One connect() attempt to one address, bounded by `budget`; the socket or -1.
int try_connect(const addrinfo* ai, milliseconds budget) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return -1;
  set_nonblocking(fd);
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      ::close(fd);
      return -1;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(budget.count(), 1))) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      ::close(fd);
      return -1;
    }
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Connects, retrying (the server may not be up yet) with a growing pause until `timeout`.
int connect_with_retry(const std::string& host, int port, milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  milliseconds pause(10);
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list) == 0) {
      for (auto* ai = list; ai; ai = ai->ai_next) {
        // Without a timeout, one attempt may take as long as the kernel's own connect timeout.
        auto left = timeout == Store::kNoTimeout
                        ? milliseconds(std::chrono::minutes(2))
                        : std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
        int fd = try_connect(ai, std::max(left, milliseconds(1)));
        if (fd >= 0) {
          ::freeaddrinfo(list);
          return fd;
        }
      }
      ::freeaddrinfo(list);
    }
    auto nap = pause;
    if (timeout != Store::kNoTimeout) {
      auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
      if (left <= milliseconds::zero()) {
        ::ember::detail::throw_error(
            ::ember::detail::str_cat("The client socket has timed out after ", timeout.count(),
                                     "ms while trying to connect to (", host, ", ", port, ")."));
      }
      nap = std::min(nap, left);
    }
    std::this_thread::sleep_for(nap);
    pause = std::min(pause * 2, milliseconds(500));
  }
}

void send_all(int fd, const std::vector<uint8_t>& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::ember::detail::throw_error(sys_error("TCPStore: failed to send to the server"));
    sent += static_cast<size_t>(n);
  }
}

// Reads exactly n bytes before `deadline` (none: wait as long as it takes).
void recv_all(int fd, uint8_t* out, size_t n, std::optional<Clock::time_point> deadline) {
  size_t got = 0;
  while (got < n) {
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::ceil<milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) ::ember::detail::throw_error("Socket Timeout");
      wait_ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) ::ember::detail::throw_error(sys_error("TCPStore: poll"));
    if (ready == 0) ::ember::detail::throw_error("Socket Timeout");
    ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0)
      ::ember::detail::throw_error(
          "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or "
          "crash?");
    if (r < 0) ::ember::detail::throw_error(sys_error("TCPStore: failed to receive from the server"));
    got += static_cast<size_t>(r);
  }
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) out += (i ? ", " : "") + keys[i];
  return out;
}

}  // namespace

struct TCPStore::Reply {
  std::vector<uint8_t> payload;
  Reader reader() const { return Reader(payload.data(), payload.size()); }
};

TCPStore::TCPStore(std::string host, int port, int world_size, bool is_master, milliseconds timeout,
                   bool wait_for_workers)
    : Store(timeout), host_(std::move(host)), port_(port) {
  EMBER_CHECK(port >= 0 && port <= 65535, "TCPStore: port must be in [0, 65535], got ", port);
  if (is_master) {
    server_ = std::make_unique<detail::TCPStoreServer>(port);
    port_ = server_->port();
  } else {
    EMBER_CHECK(port != 0, "TCPStore: a client needs the server's port (0 is only for the master)");
  }
  fd_ = connect_with_retry(host_, port_, timeout);
  if (wait_for_workers && world_size > 0) {
    try {
      this->wait_for_workers(world_size);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
}

TCPStore::~TCPStore() {
  if (fd_ >= 0) ::close(fd_);
  // server_ goes next (member order): its thread stops and it closes the other clients.
}

// c10d: every process adds 1 to "init/"; the master waits for the count to reach world_size
// (polled, as c10d does: this happens once per process group).
void TCPStore::wait_for_workers(int world_size) {
  auto start = Clock::now();
  auto raw_add = [&](int64_t delta) {
    auto rep = request(Writer().u8(kAdd).bytes(kInitKey).i64(delta).frame(), timeout_);
    auto r = rep.reader();
    EMBER_CHECK(r.u8() == kOk, "TCPStore: the server refused the worker count");
    return r.i64();
  };
  int64_t joined = raw_add(1);
  if (!is_master()) return;
  while (joined < world_size) {
    auto elapsed = Clock::now() - start;
    if (timeout_ != kNoTimeout && elapsed >= timeout_) {
      auto secs = std::chrono::ceil<std::chrono::seconds>(elapsed).count();
      ::ember::detail::throw_error(::ember::detail::str_cat("Timed out after ", secs,
                                                            " seconds waiting for clients. ", joined, "/",
                                                            world_size, " clients joined."));
    }
    std::this_thread::sleep_for(milliseconds(10));
    joined = raw_add(0);
  }
}

// Sends one framed request and reads the reply frame; a reply not there `deadline_after` from
// now raises "Socket Timeout" (kNoTimeout: waits as long as the connection lives).
TCPStore::Reply TCPStore::request(const std::vector<uint8_t>& frame, milliseconds deadline_after) {
  std::lock_guard<std::mutex> lock(mutex_);
  EMBER_CHECK(fd_ >= 0, "TCPStore: the connection to the server was lost by an earlier error");
  std::optional<Clock::time_point> deadline;
  if (deadline_after != kNoTimeout) deadline = Clock::now() + deadline_after;
  try {
    send_all(fd_, frame);
    uint8_t len_bytes[4];
    recv_all(fd_, len_bytes, 4, deadline);
    Reply rep;
    rep.payload.resize(frame_length(len_bytes));
    recv_all(fd_, rep.payload.data(), rep.payload.size(), deadline);
    return rep;
  } catch (const Error&) {
    // A reply may still be on its way: the stream is out of step, so it is not used again.
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  auto rep = request(Writer().u8(kSet).bytes(kKeyPrefix + key).bytes(value).frame(), timeout_);
  EMBER_CHECK(rep.reader().u8() == kOk, "TCPStore: set failed");
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  wait({key}, timeout_);
  auto rep = request(Writer().u8(kGet).bytes(kKeyPrefix + key).frame(), timeout_);
  auto r = rep.reader();
  // Set, then deleted by another client between the wait and the get.
  EMBER_CHECK(r.u8() == kOk, "TCPStore: key ", kKeyPrefix + key, " was deleted while getting it");
  return r.bytes();
}

int64_t TCPStore::add(const std::string& key, int64_t value) {
  auto rep = request(Writer().u8(kAdd).bytes(kKeyPrefix + key).i64(value).frame(), timeout_);
  auto r = rep.reader();
  if (r.u8() != kOk) ::ember::detail::throw_error(r.string());
  return r.i64();
}

std::vector<uint8_t> TCPStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  auto rep = request(Writer().u8(kCompareSet).bytes(kKeyPrefix + key).bytes(expected).bytes(desired).frame(),
                     timeout_);
  auto r = rep.reader();
  EMBER_CHECK(r.u8() == kOk, "TCPStore: compare_set failed");
  return r.bytes();
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  Writer w;
  w.u8(kCheck).i64(static_cast<int64_t>(keys.size()));
  for (const auto& k : keys) w.bytes(kKeyPrefix + k);
  auto rep = request(w.frame(), timeout_);
  auto r = rep.reader();
  EMBER_CHECK(r.u8() == kOk, "TCPStore: check failed");
  return r.u8() != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  auto rep = request(Writer().u8(kDelete).bytes(kKeyPrefix + key).frame(), timeout_);
  auto r = rep.reader();
  EMBER_CHECK(r.u8() == kOk, "TCPStore: delete_key failed");
  return r.u8() != 0;
}

int64_t TCPStore::num_keys() {
  auto rep = request(Writer().u8(kNumKeys).frame(), timeout_);
  auto r = rep.reader();
  EMBER_CHECK(r.u8() == kOk, "TCPStore: num_keys failed");
  return r.i64();
}

// The server parks the request and answers when the keys are set or `timeout` has passed;
// the client gives it a few seconds more before deciding the server itself is stuck.
void TCPStore::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  std::vector<std::string> full;
  for (const auto& k : keys) full.push_back(kKeyPrefix + k);
  Writer w;
  w.u8(kWait).i64(timeout.count()).i64(static_cast<int64_t>(full.size()));
  for (const auto& k : full) w.bytes(k);
  auto rep = request(w.frame(), timeout == kNoTimeout ? kNoTimeout : timeout + std::chrono::seconds(5));
  auto status = rep.reader().u8();
  if (status == kTimeout)
    ::ember::detail::throw_error(
        ::ember::detail::str_cat("wait timeout after ", timeout.count(), "ms, keys: ", join_keys(full)));
  EMBER_CHECK(status == kOk, "TCPStore: wait failed");
}

}  // namespace ember::dist
