// ember::dist::PrefixStore: a view of another Store whose keys are all "<prefix>/<key>"
// (c10d's PrefixStore), so independent groups can share one rendezvous store.
#pragma once

#include "ember/dist/store.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember::dist {

class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store)
      : Store(store->get_timeout()), prefix_(std::move(prefix)), store_(std::move(store)) {}

  using Store::compare_set;
  using Store::set;
  using Store::wait;

  void set(const std::string& key, const std::vector<uint8_t>& value) override { store_->set(join(key), value); }
  std::vector<uint8_t> get(const std::string& key) override { return store_->get(join(key)); }
  int64_t add(const std::string& key, int64_t value) override { return store_->add(join(key), value); }
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override {
    return store_->compare_set(join(key), expected, desired);
  }
  bool check(const std::vector<std::string>& keys) override { return store_->check(join(keys)); }
  bool delete_key(const std::string& key) override { return store_->delete_key(join(key)); }
  /// The underlying store's count, as c10d's PrefixStore (keys of other prefixes included).
  int64_t num_keys() override { return store_->num_keys(); }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    store_->wait(join(keys), timeout);
  }
  void set_timeout(std::chrono::milliseconds timeout) override { store_->set_timeout(timeout); }
  std::chrono::milliseconds get_timeout() const override { return store_->get_timeout(); }

  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string join(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> join(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const auto& k : keys) out.push_back(join(k));
    return out;
  }

  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace ember::dist
