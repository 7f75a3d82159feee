// GlooStoreAdapter: lets gloo's rendezvous (gloo::rendezvous::Context::connectFullMesh) read
// and write an ember::dist::Store, as c10d's ProcessGroupGloo::GlooStore does for c10d's
// Store. Internal to dist/process_group_gloo.cpp (it includes gloo's headers).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "ember/dist/store.h"

namespace ember::dist {

class GlooStoreAdapter : public ::gloo::rendezvous::Store {
 public:
  explicit GlooStoreAdapter(std::shared_ptr<dist::Store> store) : store_(std::move(store)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    std::vector<uint8_t> value = store_->get(key);
    return {value.begin(), value.end()};
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<dist::Store> store_;
};

}  // namespace ember::dist
