// ember::dist::Store: the key-value store processes rendezvous through before they form a
// process group (c10d's Store): set/get/add/compare_set/wait/check/delete_key/num_keys.
// Implementations: TCPStore (dist/tcp_store.h), FileStore (dist/file_store.h), PrefixStore.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::dist {

class Store {
 public:
  /// c10d's kDefaultTimeout: how long get/wait block before they raise.
  static constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(300);
  /// c10d's kNoTimeout: waits without a deadline.
  static constexpr std::chrono::milliseconds kNoTimeout = std::chrono::milliseconds::zero();

  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  /// The value of `key`, waiting for it to be set for up to the store's timeout.
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  /// Adds `value` to the integer stored (as decimal text) at `key`, 0 when absent; returns
  /// the new value. Atomic across all clients.
  virtual int64_t add(const std::string& key, int64_t value) = 0;
  /// Sets `key` to `desired` when its value equals `expected`, or when it is absent and
  /// `expected` is empty. Returns the value after the call; for an absent key and a non-empty
  /// `expected`, c10d returns `expected` (and sets nothing).
  virtual std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) = 0;
  /// Whether every key in `keys` is set (no waiting).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  /// Removes `key`; whether it was there.
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  /// Blocks until every key in `keys` is set, or raises after `timeout` (kNoTimeout: never).
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, get_timeout()); }

  virtual void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  virtual std::chrono::milliseconds get_timeout() const { return timeout_; }

  // std::string conveniences (c10d's Python binding takes str as well as bytes).
  void set(const std::string& key, const std::string& value) { set(key, to_bytes(value)); }
  std::string get_string(const std::string& key) { return to_string(get(key)); }
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
    return to_string(compare_set(key, to_bytes(expected), to_bytes(desired)));
  }

  static std::vector<uint8_t> to_bytes(const std::string& s) { return {s.begin(), s.end()}; }
  static std::string to_string(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

 protected:
  std::chrono::milliseconds timeout_;
};

}  // namespace ember::dist
