// Device management and streams (cuda/runtime/device.h, cuda/runtime/stream.h) on the CUDA runtime.
#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/runtime/stream.h"

namespace ember::cuda {

int device_count() {
  // Asked once: the answer cannot change within a process, and the probe is slow.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the "no device" / "no driver" error
      return 0;
    }
    return n;
  }();
  return count;
}

bool is_available() { return device_count() > 0; }

namespace {
void check_device_index(int device) {
  int n = device_count();
  EMBER_CHECK(device >= 0 && device < n, "CUDA error: invalid device ordinal (device ", device, ", but ",
              n == 0 ? "no CUDA GPUs are available" : "only " + std::to_string(n) + " visible)");
}
int resolve(int device) { return device < 0 ? current_device() : device; }
}  // namespace

int current_device() {
  EMBER_CHECK(is_available(), "Found no NVIDIA driver on your system or no CUDA GPUs are available");
  int d = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) {
  check_device_index(device);
  EMBER_CUDA_CHECK(cudaSetDevice(device));
}

void synchronize(int device) {
  DeviceGuard guard(resolve(device));
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceGuard::DeviceGuard(int device) {
  if (device < 0) return;
  int cur = current_device();
  if (cur == device) return;
  set_device(device);
  original_ = cur;
}

DeviceGuard::~DeviceGuard() {
  if (original_ >= 0) cudaSetDevice(original_);  // no throw from a destructor
}

// ---- streams ---------------------------------------------------------------------------------

namespace {

constexpr int kMaxDevices = 64;
constexpr int kStreamsPerPool = 32;  // as PyTorch: enough that round-robin rarely collides

// Per device, two pools (normal and high priority) of streams created on first use and kept
// for the life of the process (like PyTorch's: destroying streams at exit races the driver).
struct StreamPool {
  std::once_flag created;
  std::array<cudaStream_t, kStreamsPerPool> streams{};
  std::atomic<unsigned> next{0};
};
std::array<std::array<StreamPool, 2>, kMaxDevices> pools;

// The current stream of each device for this thread; nullptr is the default stream.
thread_local std::array<cudaStream_t, kMaxDevices> current_streams{};

void create_pool(StreamPool& pool, int device, bool high_priority) {
  DeviceGuard guard(device);
  int least = 0, greatest = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (cudaStream_t& s : pool.streams)
    EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high_priority ? greatest : least));
}

}  // namespace

bool CUDAStream::query() const {
  DeviceGuard guard(device_);
  cudaError_t err = cudaStreamQuery(stream_);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void CUDAStream::synchronize() const {
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::ostream& operator<<(std::ostream& os, const CUDAStream& s) {
  return os << "stream " << static_cast<const void*>(s.stream()) << " on device cuda:" << s.device_index();
}

CUDAStream getDefaultCUDAStream(int device) {
  device = resolve(device);
  check_device_index(device);
  return CUDAStream(nullptr, device);
}

CUDAStream getCurrentCUDAStream(int device) {
  device = resolve(device);
  check_device_index(device);
  return CUDAStream(current_streams[device], device);
}

void setCurrentCUDAStream(CUDAStream stream) {
  check_device_index(stream.device_index());
  current_streams[stream.device_index()] = stream.stream();
}

CUDAStream getStreamFromPool(bool high_priority, int device) {
  device = resolve(device);
  check_device_index(device);
  StreamPool& pool = pools[device][high_priority ? 1 : 0];
  std::call_once(pool.created, [&] { create_pool(pool, device, high_priority); });
  unsigned i = pool.next.fetch_add(1, std::memory_order_relaxed) % kStreamsPerPool;
  return CUDAStream(pool.streams[i], device);
}

CUDAStreamGuard::CUDAStreamGuard(CUDAStream stream)
    : original_stream_(getCurrentCUDAStream(stream.device_index())), original_device_(current_device()) {
  set_device(stream.device_index());
  setCurrentCUDAStream(stream);
}

CUDAStreamGuard::~CUDAStreamGuard() {
  current_streams[original_stream_.device_index()] = original_stream_.stream();
  cudaSetDevice(original_device_);
}

cudaStream_t current_raw_stream() { return current_streams[current_device()]; }

}  // namespace ember::cuda
