// The caching allocators' backends on the CUDA runtime (memory_backends.h).
#include "ember/cuda/runtime/memory_backends.h"

#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/device.h"

namespace ember::cuda {

// ---- events ----------------------------------------------------------------------------------

struct CudaEventBackend::PooledEvent {
  cudaEvent_t event;
  int device;
};

CudaEventBackend::~CudaEventBackend() {
  for (auto& list : free_) {
    for (PooledEvent* e : list) {
      cudaEventDestroy(e->event);  // no throw from a destructor
      delete e;
    }
  }
}

MemoryBackend::Event CudaEventBackend::record_event(CUDAStream stream) {
  int device = stream.device_index();
  DeviceGuard guard(device);  // an event is recorded on a stream of its own device
  if (free_.size() <= static_cast<size_t>(device)) free_.resize(device + 1);
  PooledEvent* e;
  if (!free_[device].empty()) {
    e = free_[device].back();
    free_[device].pop_back();
  } else {
    e = new PooledEvent{nullptr, device};
    cudaError_t err = cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming);
    if (err != cudaSuccess) delete e;
    EMBER_CUDA_CHECK(err);
  }
  cudaError_t err = cudaEventRecord(e->event, stream.stream());
  if (err != cudaSuccess) free_[device].push_back(e);
  EMBER_CUDA_CHECK(err);
  return e;
}

bool CudaEventBackend::event_done(Event event) {
  cudaError_t err = cudaEventQuery(static_cast<PooledEvent*>(event)->event);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: clear it so the next check does not see it
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void CudaEventBackend::wait_event(Event event) {
  EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<PooledEvent*>(event)->event));
}

void CudaEventBackend::release_event(Event event) {
  auto* e = static_cast<PooledEvent*>(event);
  free_[e->device].push_back(e);
}

// ---- device memory ---------------------------------------------------------------------------

void* DeviceMemoryBackend::malloc(size_t nbytes) {
  DeviceGuard guard(device_);
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, nbytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // the pool decides what an out-of-memory means
    return nullptr;
  }
  EMBER_CUDA_CHECK(err);
  return p;
}

void DeviceMemoryBackend::free(void* ptr) {
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaFree(ptr));
}

MemoryBackend::MemInfo DeviceMemoryBackend::mem_info() {
  DeviceGuard guard(device_);
  MemInfo info;
  EMBER_CUDA_CHECK(cudaMemGetInfo(&info.free, &info.total));
  return info;
}

// ---- pinned host memory ----------------------------------------------------------------------

void* PinnedMemoryBackend::malloc(size_t nbytes) {
  void* p = nullptr;
  cudaError_t err = cudaHostAlloc(&p, nbytes, cudaHostAllocDefault);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  EMBER_CUDA_CHECK(err);
  return p;
}

void PinnedMemoryBackend::free(void* ptr) { EMBER_CUDA_CHECK(cudaFreeHost(ptr)); }

// Host memory has no device-side figure to report; the pool never asks (no out-of-memory
// message is built for pinned memory).
MemoryBackend::MemInfo PinnedMemoryBackend::mem_info() { return {}; }

}  // namespace ember::cuda
