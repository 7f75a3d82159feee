// Pinned (page-locked) host memory: the caching allocator behind Tensor::pin_memory(), and
// what cuda/copy.cu asks so that host<->device copies from and to pinned memory can run
// asynchronously on a stream (non_blocking=true) without the block being reused too early.
// Plain C++; defined in cuda/runtime/pinned_allocator.cpp (cuda/no_cuda.cpp without CUDA).
#pragma once

#include <cstddef>

#include "ember/core/allocator.h"
#include "ember/cuda/runtime/stream.h"

namespace ember::cuda {

/// The caching allocator of pinned host memory; its storages are on the CPU. Raises PyTorch's
/// "Cannot access accelerator device when none is available." without a CUDA device.
Allocator* pinned_allocator();

/// Whether `ptr` points into page-locked host memory: a block of ember's pinned allocator, or
/// memory pinned by anyone else through CUDA. False without CUDA.
bool is_pinned_ptr(const void* ptr);

/// Called by an asynchronous copy on `stream` that reads or writes the pinned memory at
/// `host_ptr`: when the tensor owning it is freed, the block is reused only after the work
/// enqueued on `stream` so far (the copy) has finished. Memory not from ember's pinned
/// allocator is ignored (its owner keeps it alive).
void record_host_use(const void* host_ptr, CUDAStream stream);

/// Bytes of pinned memory held by tensors and cached for reuse.
struct HostMemoryStats {
  size_t allocated_bytes = 0;
  size_t cached_bytes = 0;
};
HostMemoryStats host_memory_stats();
/// Returns the cached pinned blocks nobody uses to the system (torch._C._host_emptyCache).
void host_empty_cache();

}  // namespace ember::cuda
