// Allocator: where tensor bytes come from. The CPU allocator is a caching one: freed blocks
// are kept by size class and reused, so a training step does not mmap/munmap and page-fault
// its activations every iteration (see Note [CPU caching allocator] in allocator.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/core/device.h"

namespace ember {

class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns memory for `nbytes` (64-byte aligned on CPU); never null for nbytes > 0.
  virtual void* allocate(size_t nbytes) = 0;
  /// Takes back what allocate(nbytes) returned, with the same nbytes.
  virtual void deallocate(void* p, size_t nbytes) = 0;
  virtual Device device() const = 0;
};

/// The process-wide CPU allocator (caching).
Allocator* cpu_allocator();

/// Statistics of the CPU caching allocator, for tests and benchmarks.
struct CpuAllocatorStats {
  size_t allocated_bytes;  // in use by tensors (rounded sizes)
  size_t cached_bytes;     // held in the cache, free for reuse
  size_t system_allocs;    // calls that reached the system allocator
};
CpuAllocatorStats cpu_allocator_stats();
/// Returns every cached CPU block to the system.
void cpu_empty_cache();

/// Returns the allocator for a device: the CPU one, or CUDA's (throws without CUDA).
Allocator* allocator_for(Device d);

}  // namespace ember
