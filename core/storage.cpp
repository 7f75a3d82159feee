// Storage: owns or wraps a tensor's bytes.
#include "ember/core/storage.h"

namespace ember {

StorageImpl::StorageImpl(size_t nbytes, Allocator* allocator)
    : data_(allocator->allocate(nbytes)),
      nbytes_(nbytes),
      device_(allocator->device()),
      allocator_(allocator) {}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device,
                         std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), allocator_(nullptr),
      deleter_(std::move(deleter)) {}

StorageImpl::~StorageImpl() {
  if (allocator_) allocator_->deallocate(data_, nbytes_);
  else if (deleter_) deleter_(data_);
}

}  // namespace ember
