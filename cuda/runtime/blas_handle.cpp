// cuBLAS handles: one per device and thread, created lazily, bound to the current stream at
// each use. A thread that ends gives its handles back to a pool that later threads (DataLoader
// workers, say) take them from, so handles are never created per thread without bound.
//
// Note [cuBLAS workspaces]
// cuBLAS's kernels need scratch memory. Its default workspace belongs to the handle, whatever
// stream the handle runs on, so a product enqueued on one stream could overwrite the scratch
// of one still running on another. As PyTorch does, each (handle, stream) pair gets its own
// workspace, allocated once from ember's caching allocator for that stream (so work on the
// stream uses it in order) and kept for the life of the process; cublasSetStream resets the
// handle to the default workspace, so cublasSetWorkspace follows it at every use. Like
// PyTorch's, the workspace counts in memory_allocated().
#include "ember/cuda/runtime/blas_handle.cuh"

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ember/cuda/cuda.h"
#include "ember/cuda/runtime/cuda_check.h"

namespace ember::cuda {
namespace {

struct Workspace {
  void* ptr = nullptr;
  size_t bytes = 0;
};

struct Handle {
  cublasHandle_t handle = nullptr;
  std::unordered_map<cudaStream_t, Workspace> workspaces;  // Note [cuBLAS workspaces]
};

/// Handles no live thread holds, per device. Never destroyed: at exit, destroying a handle can
/// race the CUDA runtime's own teardown (PyTorch leaks them for the same reason).
struct HandlePool {
  std::mutex mutex;
  std::unordered_map<int, std::vector<Handle*>> free;
};

HandlePool& pool() {
  static HandlePool* p = new HandlePool;
  return *p;
}

/// The handles this thread holds, per device; back to the pool when the thread ends.
struct ThreadHandles {
  std::unordered_map<int, Handle*> by_device;
  ~ThreadHandles() {
    std::lock_guard<std::mutex> lock(pool().mutex);
    for (auto& [device, h] : by_device) pool().free[device].push_back(h);
  }
};

thread_local ThreadHandles thread_handles;

/// A handle for `device`, the current device: a pooled one, or a new one.
Handle* acquire(int device) {
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    std::vector<Handle*>& free = pool().free[device];
    if (!free.empty()) {
      Handle* h = free.back();
      free.pop_back();
      return h;
    }
  }
  auto h = std::make_unique<Handle>();
  EMBER_CUBLAS_CHECK(cublasCreate(&h->handle));
  // CUBLAS_DEFAULT_MATH: each product's compute type decides TF32 (cuda/gemm.cpp asks for
  // CUBLAS_COMPUTE_32F_FAST_TF32 only when ember::backends::cuda::matmul::allow_tf32 is set).
  EMBER_CUBLAS_CHECK(cublasSetMathMode(h->handle, CUBLAS_DEFAULT_MATH));
  return h.release();
}

/// NVIDIA's recommended workspace: 32 MiB on Hopper and later, 4 MiB before.
size_t workspace_bytes(int device) {
  int major = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return (major >= 9 ? size_t{32} : size_t{4}) << 20;
}

}  // namespace

cublasHandle_t blas_handle() {
  const int device = current_device();
  Handle*& h = thread_handles.by_device[device];
  if (h == nullptr) h = acquire(device);
  cudaStream_t stream = current_raw_stream();
  EMBER_CUBLAS_CHECK(cublasSetStream(h->handle, stream));
  Workspace& ws = h->workspaces[stream];
  if (ws.ptr == nullptr) {
    const size_t bytes = workspace_bytes(device);
    ws.ptr = allocator(device)->allocate(bytes);  // tied to the current stream, as wanted
    ws.bytes = bytes;
  }
  EMBER_CUBLAS_CHECK(cublasSetWorkspace(h->handle, ws.ptr, ws.bytes));
  return h->handle;
}

}  // namespace ember::cuda
