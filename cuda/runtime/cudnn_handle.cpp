// cuDNN handles: one per device and thread, created lazily, bound to the current stream at each
// use. A thread that ends gives its handles back to a pool that later threads (DataLoader
// workers, say) take them from, so handles are never created per thread without bound. The
// same scheme as cuBLAS's (cuda/runtime/blas_handle.cpp), without the per-stream workspaces: cuDNN's
// convolutions take their workspace as an argument.
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/cuda/cuda.h"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/cudnn_handle.cuh"
#include "ember/cuda/runtime/versions.h"

namespace ember::cuda {
namespace {

/// Handles no live thread holds, per device. Never destroyed: at exit, destroying a handle can
/// race the CUDA runtime's own teardown (PyTorch leaks them for the same reason).
struct HandlePool {
  std::mutex mutex;
  std::unordered_map<int, std::vector<cudnnHandle_t>> free;
};

HandlePool& pool() {
  static HandlePool* p = new HandlePool;
  return *p;
}

/// The handles this thread holds, per device; back to the pool when the thread ends.
struct ThreadHandles {
  std::unordered_map<int, cudnnHandle_t> by_device;
  ~ThreadHandles() {
    std::lock_guard<std::mutex> lock(pool().mutex);
    for (auto& [device, h] : by_device) pool().free[device].push_back(h);
  }
};

thread_local ThreadHandles thread_handles;

/// A handle for `device`, the current device: a pooled one, or a new one.
cudnnHandle_t acquire(int device) {
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    std::vector<cudnnHandle_t>& free = pool().free[device];
    if (!free.empty()) {
      cudnnHandle_t h = free.back();
      free.pop_back();
      return h;
    }
  }
  cudnnHandle_t h = nullptr;
  EMBER_CUDNN_CHECK(cudnnCreate(&h));  // on the current device, which is `device`
  return h;
}

}  // namespace

cudnnHandle_t cudnn_handle() {
  const int device = current_device();
  cudnnHandle_t& h = thread_handles.by_device[device];
  if (h == nullptr) h = acquire(device);
  EMBER_CUDNN_CHECK(cudnnSetStream(h, current_raw_stream()));
  return h;
}

std::string cudnn_built_version() {
  return std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." + std::to_string(CUDNN_PATCHLEVEL);
}
/// cudnnGetVersion() is the loaded library's (major * 10000 + minor * 100 + patch in cuDNN 9).
std::string cudnn_loaded_version() {
  const size_t v = cudnnGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

}  // namespace ember::cuda
