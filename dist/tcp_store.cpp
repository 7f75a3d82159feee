// TCPStore: the client (every process) and the server (the master's thread).
//
// Wire protocol. Every message, both ways, is one frame: a 4-byte little-endian payload
// length, then the payload. Inside a payload, integers are 8-byte little-endian two's
// complement and a byte string is its 8-byte length then its bytes.
//   request  = command:u8, then its arguments
//     SET key value              -> OK
//     GET key                    -> OK value | NOT_FOUND
//     ADD key delta:i64          -> OK new:i64 | ERROR message
//     COMPARE_SET key exp desired-> OK value
//     CHECK n:i64 key*n          -> OK present:u8
//     DELETE key                 -> OK existed:u8
//     NUM_KEYS                   -> OK count:i64
//     WAIT timeout_ms:i64 n key*n-> OK (all set) | TIMEOUT  (timeout_ms 0: none)
//   reply    = status:u8 (OK, ERROR, TIMEOUT, NOT_FOUND), then its results
// A client sends one request and reads its reply before the next (TCPStore's mutex).
//
// The server is one thread running a poll() loop over the listening socket, a wake-up pipe
// and the clients' non-blocking sockets. One thread rather than one per connection because
// a WAIT is answered when another connection sets the key: with every connection in one
// loop, a parked WAIT is just a note on its connection that the loop settles after each
// change (or when its deadline, the poll timeout, passes), with no locks and no polling by
// the client. Rendezvous traffic is small; one thread serves thousands of clients.
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

namespace ember::dist {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

enum Command : uint8_t { kSet = 1, kGet, kAdd, kCompareSet, kCheck, kDelete, kNumKeys, kWait };
enum Status : uint8_t { kOk = 0, kError, kTimeout, kNotFound };

// The key every process adds 1 to when the store waits for workers (c10d's "init/").
const std::string kInitKey = "init/";
// c10d's TCPStore puts "/" before user keys, so its messages name keys as "/k".
const std::string kKeyPrefix = "/";

std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// ---- payload encoding --------------------------------------------------------------------

class Writer {
 public:
  Writer& u8(uint8_t v) {
    buf_.push_back(v);
    return *this;
  }
  Writer& i64(int64_t v) {
    auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(u >> (8 * i)));
    return *this;
  }
  Writer& bytes(const uint8_t* data, size_t n) {
    i64(static_cast<int64_t>(n));
    buf_.insert(buf_.end(), data, data + n);
    return *this;
  }
  Writer& bytes(const std::vector<uint8_t>& v) { return bytes(v.data(), v.size()); }
  Writer& bytes(const std::string& s) { return bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  // The payload with its 4-byte length in front.
  std::vector<uint8_t> frame() const {
    auto n = static_cast<uint32_t>(buf_.size());
    std::vector<uint8_t> out(4 + buf_.size());
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
    if (n) std::memcpy(out.data() + 4, buf_.data(), n);
    return out;
  }

 private:
  std::vector<uint8_t> buf_;
};

// Reads a payload; a malformed one raises (the server drops that client).
class Reader {
 public:
  Reader(const uint8_t* data, size_t n) : p_(data), end_(data + n) {}
  uint8_t u8() {
    need(1);
    return *p_++;
  }
  int64_t i64() {
    need(8);
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += 8;
    return static_cast<int64_t>(u);
  }
  std::vector<uint8_t> bytes() {
    auto n = i64();
    EMBER_CHECK(n >= 0 && n <= end_ - p_, "TCPStore: malformed message");
    std::vector<uint8_t> v(p_, p_ + n);
    p_ += n;
    return v;
  }
  std::string string() { return Store::to_string(bytes()); }

 private:
  void need(ptrdiff_t n) const { EMBER_CHECK(end_ - p_ >= n, "TCPStore: malformed message"); }
  const uint8_t* p_;
  const uint8_t* end_;
};

uint32_t frame_length(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

std::optional<int64_t> parse_int(const std::vector<uint8_t>& v) {
  int64_t out = 0;
  auto first = reinterpret_cast<const char*>(v.data());
  auto [ptr, ec] = std::from_chars(first, first + v.size(), out);
  if (ec != std::errc() || ptr != first + v.size() || v.empty()) return std::nullopt;
  return out;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

// ---- the server ----------------------------------------------------------------------------

namespace detail {

class TCPStoreServer {
 public:
  explicit TCPStoreServer(int port) {
    listen_fd_ = listen_on(port);
    if (::pipe(wake_) != 0) {
      ::close(listen_fd_);
      detail_throw(sys_error("TCPStore: pipe"));
    }
    set_nonblocking(listen_fd_);
    thread_ = std::thread([this] { loop(); });
  }

  // Wakes the loop through the pipe and joins it; every client connection is closed, so
  // clients (waiting ones included) get an error at once.
  ~TCPStoreServer() {
    char c = 1;
    while (::write(wake_[1], &c, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    for (auto& [fd, conn] : conns_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  int port() const { return port_; }

 private:
  struct Connection {
    std::vector<uint8_t> in, out;
    bool parked = false;  // a WAIT not answered yet: later requests stay in `in` meanwhile
    std::vector<std::string> wait_keys;
    std::optional<Clock::time_point> wait_deadline;
  };

  [[noreturn]] static void detail_throw(const std::string& msg) { ::ember::detail::throw_error(msg); }

  // Listens on every address: IPv6 accepting IPv4 too where the host has IPv6, else IPv4.
  int listen_on(int port) {
    int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, zero = 0;
    if (fd >= 0) {
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<uint16_t>(port));
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, SOMAXCONN) == 0) {
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin6_port);
        return fd;
      }
      ::close(fd);
    }
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) detail_throw(sys_error("TCPStore: socket"));
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      auto msg = ::ember::detail::str_cat("The server socket has failed to listen on any local network address. "
                                          "port: ", port, ", ", std::strerror(errno));
      ::close(fd);
      detail_throw(msg);
    }
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    return fd;
  }

  void loop() {
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, conn] : conns_)
        fds.push_back({fd, static_cast<short>(POLLIN | (conn.out.empty() ? 0 : POLLOUT)), 0});
      int n = ::poll(fds.data(), fds.size(), poll_timeout_ms());
      if (n < 0 && errno != EINTR) return;
      if (fds[0].revents) return;  // the master store is going away
      if (fds[1].revents & POLLIN) accept_all();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto it = conns_.find(fds[i].fd);
        if (it == conns_.end()) continue;
        bool ok = true;
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) ok = read_from(it->first, it->second);
        if (ok && !it->second.out.empty()) ok = flush(it->first, it->second);
        if (!ok) drop(it->first);
      }
      settle();
    }
  }

  // The time to the nearest parked WAIT's deadline (-1: none).
  int poll_timeout_ms() const {
    std::optional<Clock::time_point> next;
    for (auto& [fd, c] : conns_)
      if (c.parked && c.wait_deadline && (!next || *c.wait_deadline < *next)) next = c.wait_deadline;
    if (!next) return -1;
    auto ms = std::chrono::ceil<milliseconds>(*next - Clock::now()).count();
    return static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
  }

  void accept_all() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      conns_.emplace(fd, Connection{});
    }
  }

  // False when the client closed or broke its connection.
  static bool read_from(int fd, Connection& c) {
    uint8_t buf[65536];
    for (;;) {
      ssize_t got = ::recv(fd, buf, sizeof buf, 0);
      if (got > 0) {
        c.in.insert(c.in.end(), buf, buf + got);
        continue;
      }
      if (got == 0) return false;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
  }

  static bool flush(int fd, Connection& c) {
    size_t sent = 0;
    while (sent < c.out.size()) {
      ssize_t n = ::send(fd, c.out.data() + sent, c.out.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return false;
    }
    c.out.erase(c.out.begin(), c.out.begin() + static_cast<ptrdiff_t>(sent));
    return true;
  }

  void drop(int fd) {
    ::close(fd);
    conns_.erase(fd);
  }

  // Answers what can be answered: parked WAITs whose keys are all set or whose deadline has
  // passed, then every complete request behind them. Repeats while a request changed keys,
  // since that may release another connection's WAIT.
  void settle() {
    bool changed = true;
    while (changed) {
      changed = false;
      std::vector<int> broken;
      for (auto& [fd, c] : conns_) {
        if (c.parked) try_release(c);
        try {
          while (!c.parked && c.in.size() >= 4) {
            uint32_t len = frame_length(c.in.data());
            if (c.in.size() < 4 + size_t{len}) break;
            Reader r(c.in.data() + 4, len);
            changed |= handle(r, c);
            c.in.erase(c.in.begin(), c.in.begin() + 4 + len);
          }
        } catch (const Error&) {
          broken.push_back(fd);  // a malformed request: not a client of ours
          continue;
        }
        if (!c.out.empty() && !flush(fd, c)) broken.push_back(fd);
      }
      for (int fd : broken) drop(fd);
    }
  }

  bool has_all(const std::vector<std::string>& keys) const {
    return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return data_.count(k) != 0; });
  }

  void try_release(Connection& c) {
    if (has_all(c.wait_keys)) {
      reply(c, Writer().u8(kOk));
    } else if (c.wait_deadline && Clock::now() >= *c.wait_deadline) {
      reply(c, Writer().u8(kTimeout));
    } else {
      return;
    }
    c.parked = false;
    c.wait_keys.clear();
    c.wait_deadline.reset();
  }

  static void reply(Connection& c, const Writer& w) {
    auto f = w.frame();
    c.out.insert(c.out.end(), f.begin(), f.end());
  }

  // Runs one request; true when it changed the keys.
  bool handle(Reader& r, Connection& c) {
    switch (r.u8()) {
      case kSet: {
        auto key = r.string();
        data_[key] = r.bytes();
        reply(c, Writer().u8(kOk));
        return true;
      }
      case kGet: {
        auto it = data_.find(r.string());
        reply(c, it == data_.end() ? Writer().u8(kNotFound) : Writer().u8(kOk).bytes(it->second));
        return false;
      }
      case kAdd: {
        auto key = r.string();
        int64_t delta = r.i64();
        int64_t now = 0;
        if (auto it = data_.find(key); it != data_.end()) {
          auto v = parse_int(it->second);
          if (!v) {
            reply(c, Writer().u8(kError).bytes("add: the value of key " + key + " is not an integer"));
            return false;
          }
          now = *v;
        }
        now += delta;
        data_[key] = Store::to_bytes(std::to_string(now));
        reply(c, Writer().u8(kOk).i64(now));
        return true;
      }
      case kCompareSet: {
        auto key = r.string();
        auto expected = r.bytes();
        auto desired = r.bytes();
        auto it = data_.find(key);
        if (it == data_.end()) {
          if (!expected.empty()) {
            reply(c, Writer().u8(kOk).bytes(expected));
            return false;
          }
          data_[key] = desired;
          reply(c, Writer().u8(kOk).bytes(desired));
          return true;
        }
        if (it->second == expected) it->second = desired;
        reply(c, Writer().u8(kOk).bytes(it->second));
        return true;
      }
      case kCheck: {
        auto keys = read_keys(r);
        reply(c, Writer().u8(kOk).u8(has_all(keys) ? 1 : 0));
        return false;
      }
      case kDelete: {
        bool existed = data_.erase(r.string()) != 0;
        reply(c, Writer().u8(kOk).u8(existed ? 1 : 0));
        return existed;
      }
      case kNumKeys:
        reply(c, Writer().u8(kOk).i64(static_cast<int64_t>(data_.size())));
        return false;
      case kWait: {
        int64_t ms = r.i64();
        c.wait_keys = read_keys(r);
        c.parked = true;
        if (ms > 0) c.wait_deadline = Clock::now() + milliseconds(ms);
        try_release(c);
        return false;
      }
      default:
        ::ember::detail::throw_error("TCPStore: unknown command");
    }
  }

  static std::vector<std::string> read_keys(Reader& r) {
    int64_t n = r.i64();
    EMBER_CHECK(n >= 0 && n < (1 << 24), "TCPStore: malformed message");
    std::vector<std::string> keys;
    for (int64_t i = 0; i < n; ++i) keys.push_back(r.string());
    return keys;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::map<int, Connection> conns_;
  std::unordered_map<std::string, std::vector<uint8_t>> data_;
  std::thread thread_;
};

}  // namespace detail

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
        auto left = timeout == Store::kNoTimeout ? milliseconds(std::chrono::minutes(2))
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
        ::ember::detail::throw_error(::ember::detail::str_cat("The client socket has timed out after ",
                                                              timeout.count(), "ms while trying to connect to (",
                                                              host, ", ", port, ")."));
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
          "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?");
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
      ::ember::detail::throw_error(::ember::detail::str_cat("Timed out after ", secs, " seconds waiting for clients. ",
                                                            joined, "/", world_size, " clients joined."));
    }
    std::this_thread::sleep_for(milliseconds(10));
    joined = raw_add(0);
  }
}

// Sends one framed request and reads the reply frame; a reply not there `deadline_after` from
// now raises "Socket Timeout" (kNoTimeout: waits as long as the connection lives).
TCPStore::Reply TCPStore::request(const std::vector<uint8_t>& frame, milliseconds deadline_after) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<Clock::time_point> deadline;
  if (deadline_after != kNoTimeout) deadline = Clock::now() + deadline_after;
  send_all(fd_, frame);
  uint8_t len_bytes[4];
  recv_all(fd_, len_bytes, 4, deadline);
  Reply rep;
  rep.payload.resize(frame_length(len_bytes));
  recv_all(fd_, rep.payload.data(), rep.payload.size(), deadline);
  return rep;
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
  auto rep =
      request(Writer().u8(kCompareSet).bytes(kKeyPrefix + key).bytes(expected).bytes(desired).frame(), timeout_);
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
