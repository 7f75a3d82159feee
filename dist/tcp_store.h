// ember::dist::TCPStore: c10d's TCPStore. The master process runs the store's server on a
// thread; every process (the master too) talks to it as a client over one TCP connection.
// The wire protocol is described in dist/tcp_store_wire.h, the server's design in
// dist/tcp_store_server.cpp.
#pragma once

#include "ember/dist/store.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ember::dist {

namespace detail {
class TCPStoreServer;
}

class TCPStore : public Store {
 public:
  /// Connects to (host, port), retrying until `timeout`; the master first starts the server
  /// there (port 0: a free port, see port()). With `wait_for_workers` and a known
  /// `world_size` (> 0), every process registers under the key "init/" and the master
  /// returns only once world_size processes have (or raises after `timeout`).
  TCPStore(std::string host, int port, int world_size = -1, bool is_master = false,
           std::chrono::milliseconds timeout = kDefaultTimeout, bool wait_for_workers = true);
  ~TCPStore() override;

  using Store::compare_set;
  using Store::set;
  using Store::wait;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  /// The port the server listens on (the one picked when constructed with port 0).
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  bool is_master() const { return server_ != nullptr; }

 private:
  struct Reply;
  Reply request(const std::vector<uint8_t>& payload, std::chrono::milliseconds deadline_after);
  void wait_for_workers(int world_size);

  std::string host_;
  int port_;
  std::unique_ptr<detail::TCPStoreServer> server_;  // the master's; destroyed after the client
  int fd_ = -1;
  std::mutex mutex_;  // one request at a time on the connection
};

}  // namespace ember::dist
