// The CUDA caching allocator: per device, a BlockPool (cuda/runtime/block_pool.h, where the caching
// logic lives) over cudaMalloc, serving each request for the calling thread's current stream.
// EMBER_NO_ALLOCATOR_CACHE=1 turns caching off (each tensor gets its own cudaMalloc), so that
// compute-sanitizer sees every overrun and every use after free, as with the CPU allocator.
#include "ember/cuda/runtime/caching_allocator.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "ember/core/tensor.h"
#include "ember/cuda/runtime/block_pool.h"
#include "ember/cuda/cuda.h"
#include "ember/cuda/runtime/memory_backends.h"

namespace ember::cuda {
namespace {

constexpr int kMaxDevices = 64;

bool caching_enabled() {
  const char* off = std::getenv("EMBER_NO_ALLOCATOR_CACHE");
  return !(off && off[0] == '1');
}

class CudaCachingAllocator final : public Allocator {
 public:
  explicit CudaCachingAllocator(int device)
      : device_(device), backend_(device), pool_(backend_, device, caching_enabled()) {}

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;  // as PyTorch: an empty tensor owns no device memory
    return pool_.allocate(nbytes, getCurrentCUDAStream(device_));
  }
  void deallocate(void* p, size_t) override {
    if (p) pool_.free(p);
  }
  Device device() const override { return Device(kCUDA, static_cast<int8_t>(device_)); }
  BlockPool& pool() { return pool_; }

 private:
  int device_;
  DeviceMemoryBackend backend_;
  BlockPool pool_;
};

// Created on a device's first allocation and never destroyed: tensors held by static objects
// may be freed after main returns, and freeing device memory then races the driver's teardown.
std::array<std::once_flag, kMaxDevices> created;
std::array<std::atomic<CudaCachingAllocator*>, kMaxDevices> allocators{};

void check_device(int device) {
  int n = device_count();
  EMBER_CHECK(
      device >= 0 && device < n && device < kMaxDevices, "CUDA error: invalid device ordinal (device ",
      device, ", but ",
      n == 0 ? std::string("no CUDA GPUs are available)") : "only " + std::to_string(n) + " visible)");
}

CudaCachingAllocator* get(int device) {
  check_device(device);
  std::call_once(created[device], [device] { allocators[device] = new CudaCachingAllocator(device); });
  return allocators[device];
}

// The allocator of `device` (current when -1) if it has allocated anything yet, else null:
// statistics of an unused device are zero without creating anything.
CudaCachingAllocator* existing(int device) {
  if (!is_available()) return nullptr;
  if (device < 0) device = current_device();
  check_device(device);
  return allocators[device].load();
}

MemoryStats stats_of(int device) {
  CudaCachingAllocator* a = existing(device);
  return a ? a->pool().stats() : MemoryStats{};
}

}  // namespace

Allocator* allocator(int device) { return get(device); }

size_t memory_allocated(int device) { return stats_of(device).allocated_bytes; }
size_t max_memory_allocated(int device) { return stats_of(device).max_allocated_bytes; }
size_t memory_reserved(int device) { return stats_of(device).reserved_bytes; }
size_t max_memory_reserved(int device) { return stats_of(device).max_reserved_bytes; }
MemoryStats memory_stats(int device) { return stats_of(device); }

void reset_peak_memory_stats(int device) {
  if (CudaCachingAllocator* a = existing(device)) a->pool().reset_peak_stats();
}

void empty_cache() {
  for (auto& a : allocators)
    if (CudaCachingAllocator* p = a.load()) p->pool().empty_cache();
}

void record_stream(const Tensor& tensor, CUDAStream stream) {
  EMBER_CHECK(tensor.defined() && tensor.is_cuda(), "record_stream: expected a CUDA tensor, but got ",
              tensor.defined() ? tensor.device().str() : std::string("an undefined tensor"));
  get(tensor.device().index())->pool().record_stream(tensor.impl()->storage()->data(), stream);
}

}  // namespace ember::cuda
