// Storage: a reference-counted byte buffer on one device, shared by a tensor and its views.
// It also carries the version counter that all views of the buffer share
// (Note [Version counter] in tensor_impl.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ember/core/allocator.h"
#include "ember/core/device.h"
#include "ember/core/intrusive_ptr.h"

namespace ember {

class StorageImpl final : public intrusive_target {
 public:
  /// Owns `nbytes` from `allocator`.
  StorageImpl(size_t nbytes, Allocator* allocator);
  /// Wraps external memory (from_blob); `deleter` (may be empty) runs when the last user goes.
  StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl() override;
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_;
  std::function<void(void*)> deleter_;
  std::atomic<uint32_t> version_{0};
};

using Storage = intrusive_ptr<StorageImpl>;

}  // namespace ember
