// The server is one thread running a poll() loop over the listening socket, a wake-up pipe
// and the clients' non-blocking sockets. One thread rather than one per connection because
// a WAIT is answered when another connection sets the key: with every connection in one
// loop, a parked WAIT is just a note on its connection that the loop settles after each
// change (or when its deadline, the poll timeout, passes), with no locks and no polling by
// the client. Rendezvous traffic is small; one thread serves thousands of clients.
#include "ember/dist/tcp_store_server.h"

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

namespace ember::dist::detail {

using namespace tcp_wire;

TCPStoreServer::TCPStoreServer(int port) {
  listen_fd_ = listen_on(port);
  if (::pipe(wake_) != 0) {
    ::close(listen_fd_);
    detail_throw(sys_error("TCPStore: pipe"));
  }
  set_nonblocking(listen_fd_);
  thread_ = std::thread([this] { loop(); });
}

TCPStoreServer::~TCPStoreServer() {
  char c = 1;
  while (::write(wake_[1], &c, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  for (auto& [fd, conn] : conns_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

int TCPStoreServer::listen_on(int port) {
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
    auto msg = ::ember::detail::str_cat(
        "The server socket has failed to listen on any local network address. "
        "port: ",
        port, ", ", std::strerror(errno));
    ::close(fd);
    detail_throw(msg);
  }
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  return fd;
}

void TCPStoreServer::loop() {
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

int TCPStoreServer::poll_timeout_ms() const {
  std::optional<Clock::time_point> next;
  for (auto& [fd, c] : conns_)
    if (c.parked && c.wait_deadline && (!next || *c.wait_deadline < *next)) next = c.wait_deadline;
  if (!next) return -1;
  auto ms = std::chrono::ceil<milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
}

void TCPStoreServer::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conns_.emplace(fd, Connection{});
  }
}

bool TCPStoreServer::read_from(int fd, Connection& c) {
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

bool TCPStoreServer::flush(int fd, Connection& c) {
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

void TCPStoreServer::drop(int fd) {
  ::close(fd);
  conns_.erase(fd);
}

void TCPStoreServer::settle() {
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

bool TCPStoreServer::has_all(const std::vector<std::string>& keys) const {
  return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return data_.count(k) != 0; });
}

void TCPStoreServer::try_release(Connection& c) {
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

void TCPStoreServer::reply(Connection& c, const Writer& w) {
  auto f = w.frame();
  c.out.insert(c.out.end(), f.begin(), f.end());
}

bool TCPStoreServer::handle(Reader& r, Connection& c) {
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

std::vector<std::string> TCPStoreServer::read_keys(Reader& r) {
  int64_t n = r.i64();
  EMBER_CHECK(n >= 0 && n < (1 << 24), "TCPStore: malformed message");
  std::vector<std::string> keys;
  for (int64_t i = 0; i < n; ++i) keys.push_back(r.string());
  return keys;
}

}  // namespace ember::dist::detail
