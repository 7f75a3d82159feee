// The CUDA runtime under the caching allocators' pools (cuda/runtime/block_pool.h): device memory from
// cudaMalloc, pinned host memory from cudaHostAlloc, and the events both use to learn when a
// stream has finished with a block. Internal to cuda/; defined in memory_backends.cpp.
#pragma once

#include <vector>

#include "ember/cuda/runtime/block_pool.h"

namespace ember::cuda {

/// Events without timing (cheaper to record), recycled per device so a steady state creates
/// none. Called under the owning pool's lock, so the free lists need no lock of their own.
class CudaEventBackend : public MemoryBackend {
 public:
  ~CudaEventBackend() override;
  Event record_event(CUDAStream stream) override;
  bool event_done(Event event) override;
  void wait_event(Event event) override;
  void release_event(Event event) override;

 private:
  struct PooledEvent;
  std::vector<std::vector<PooledEvent*>> free_;  // indexed by device
};

/// Memory of one device.
class DeviceMemoryBackend final : public CudaEventBackend {
 public:
  explicit DeviceMemoryBackend(int device) : device_(device) {}
  void* malloc(size_t nbytes) override;
  void free(void* ptr) override;
  MemInfo mem_info() override;

 private:
  int device_;
};

/// Page-locked host memory, usable by every device (unified addressing makes it portable).
class PinnedMemoryBackend final : public CudaEventBackend {
 public:
  void* malloc(size_t nbytes) override;
  void free(void* ptr) override;
  MemInfo mem_info() override;
};

}  // namespace ember::cuda
