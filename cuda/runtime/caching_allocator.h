// The CUDA caching allocator's statistics and controls, with torch.cuda's names:
// memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved,
// reset_peak_memory_stats, memory_stats, empty_cache, and record_stream for tensors used on a
// second stream. `device` -1 means the current device. Plain C++.
#pragma once

#include <cstddef>

#include "ember/cuda/runtime/stream.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// The counters of one device's allocator (named after the keys of torch.cuda.memory_stats()).
struct MemoryStats {
  size_t allocated_bytes = 0;      // in blocks handed out to tensors (rounded sizes)
  size_t max_allocated_bytes = 0;  // peak of allocated_bytes since the last reset
  size_t reserved_bytes = 0;       // in segments obtained from the device with cudaMalloc
  size_t max_reserved_bytes = 0;
  size_t active_blocks = 0;      // blocks handed out and not yet freed
  size_t segments = 0;           // segments currently held
  size_t num_device_alloc = 0;   // cudaMalloc calls that succeeded
  size_t num_device_free = 0;    // cudaFree calls
  size_t num_alloc_retries = 0;  // allocations that had to give back the cache and retry
  size_t num_ooms = 0;           // allocations that failed even after that
};

/// Bytes held by tensors on `device`. Without CUDA (or before the device was used): 0, as
/// torch.cuda's functions return before CUDA is initialised.
size_t memory_allocated(int device = -1);
/// Peak of memory_allocated since the start or the last reset_peak_memory_stats.
size_t max_memory_allocated(int device = -1);
/// Bytes the allocator holds on `device`, in use or cached.
size_t memory_reserved(int device = -1);
size_t max_memory_reserved(int device = -1);
/// Restarts the peaks from the current values.
void reset_peak_memory_stats(int device = -1);
MemoryStats memory_stats(int device = -1);
/// Returns every cached segment that holds no tensor to the device, on every device (memory
/// still held by tensors stays).
void empty_cache();
/// Marks `tensor`'s memory as used by `stream` as well as the stream it was allocated on:
/// when the tensor is freed, the memory is reused only after the work enqueued on `stream`
/// so far has finished (torch.Tensor.record_stream).
void record_stream(const Tensor& tensor, CUDAStream stream);

}  // namespace ember::cuda
