// The TCPStore's server, which the master process runs on a thread of its own (TCPStore's
// constructor starts it; tcp_store_server.cpp). Internal to dist/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ember/dist/tcp_store_wire.h"

namespace ember::dist::detail {

class TCPStoreServer {
 public:
  explicit TCPStoreServer(int port);

  // Wakes the loop through the pipe and joins it; every client connection is closed, so
  // clients (waiting ones included) get an error at once.
  ~TCPStoreServer();

  int port() const { return port_; }

 private:
  struct Connection {
    std::vector<uint8_t> in, out;
    bool parked = false;  // a WAIT not answered yet: later requests stay in `in` meanwhile
    std::vector<std::string> wait_keys;
    std::optional<tcp_wire::Clock::time_point> wait_deadline;
  };

  [[noreturn]] static void detail_throw(const std::string& msg) { ::ember::detail::throw_error(msg); }

  // Listens on every address: IPv6 accepting IPv4 too where the host has IPv6, else IPv4.
  int listen_on(int port);

  void loop();

  // The time to the nearest parked WAIT's deadline (-1: none).
  int poll_timeout_ms() const;

  void accept_all();

  // False when the client closed or broke its connection.
  static bool read_from(int fd, Connection& c);

  static bool flush(int fd, Connection& c);

  void drop(int fd);

  // Answers what can be answered: parked WAITs whose keys are all set or whose deadline has
  // passed, then every complete request behind them. Repeats while a request changed keys,
  // since that may release another connection's WAIT.
  void settle();

  bool has_all(const std::vector<std::string>& keys) const;

  void try_release(Connection& c);

  static void reply(Connection& c, const tcp_wire::Writer& w);

  // Runs one request; true when it changed the keys.
  bool handle(tcp_wire::Reader& r, Connection& c);

  static std::vector<std::string> read_keys(tcp_wire::Reader& r);

  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::map<int, Connection> conns_;
  std::unordered_map<std::string, std::vector<uint8_t>> data_;
  std::thread thread_;
};

}  // namespace ember::dist::detail
