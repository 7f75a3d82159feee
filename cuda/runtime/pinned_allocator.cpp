// The pinned host allocator (cuda/runtime/pinned_allocator.h): a HostBlockPool (cuda/runtime/block_pool.h)
// over cudaHostAlloc. Like the device allocator, it honours EMBER_NO_ALLOCATOR_CACHE=1.
#include "ember/cuda/runtime/pinned_allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "ember/cuda/runtime/block_pool.h"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/runtime/memory_backends.h"

namespace ember::cuda {
namespace {

bool caching_enabled() {
  const char* off = std::getenv("EMBER_NO_ALLOCATOR_CACHE");
  return !(off && off[0] == '1');
}

class PinnedAllocator final : public Allocator {
 public:
  PinnedAllocator() : pool_(backend_, caching_enabled()) {}
  // A CPU storage may be asked for 0 bytes and still wants a valid pointer.
  void* allocate(size_t nbytes) override { return pool_.allocate(std::max<size_t>(nbytes, 1)); }
  void deallocate(void* p, size_t) override {
    if (p) pool_.free(p);
  }
  Device device() const override { return kCPU; }
  HostBlockPool& pool() { return pool_; }

 private:
  PinnedMemoryBackend backend_;
  HostBlockPool pool_;
};

// Created on first use and never destroyed (tensors in static objects may outlive main).
std::once_flag created;
std::atomic<PinnedAllocator*> instance{nullptr};

}  // namespace

Allocator* pinned_allocator() {
  EMBER_CHECK(is_available(), "Cannot access accelerator device when none is available.");
  std::call_once(created, [] { instance = new PinnedAllocator(); });
  return instance.load();
}

bool is_pinned_ptr(const void* ptr) {
  if (!ptr || !is_available()) return false;
  PinnedAllocator* a = instance.load();
  if (a && a->pool().contains(ptr)) return true;
  // Memory pinned elsewhere (cudaHostRegister, another library) counts too, as in PyTorch.
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

void record_host_use(const void* host_ptr, CUDAStream stream) {
  if (PinnedAllocator* a = instance.load()) a->pool().record_use(host_ptr, stream);
}

HostMemoryStats host_memory_stats() {
  PinnedAllocator* a = instance.load();
  if (!a) return {};
  return {a->pool().allocated_bytes(), a->pool().cached_bytes()};
}

void host_empty_cache() {
  if (PinnedAllocator* a = instance.load()) a->pool().empty_cache();
}

}  // namespace ember::cuda
