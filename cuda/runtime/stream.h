// CUDA streams as c10::cuda::CUDAStream: the default (legacy) stream of each device, streams
// from a per-device pool, and a current stream per thread and device that every ember kernel
// and copy is enqueued on. Plain C++: the CUDA handle is carried as an opaque pointer.
#pragma once

#include <cstdint>
#include <ostream>

#include "ember/core/device.h"

struct CUstream_st;  // the CUDA runtime's stream object (cudaStream_t is CUstream_st*)

namespace ember::cuda {

class CUDAStream {
 public:
  using Handle = CUstream_st*;
  CUDAStream(Handle stream, int device) : stream_(stream), device_(device) {}

  /// The cudaStream_t; nullptr is the device's default (legacy) stream.
  Handle stream() const { return stream_; }
  int device_index() const { return device_; }
  Device device() const { return Device(kCUDA, static_cast<int8_t>(device_)); }
  /// Whether all work enqueued so far has finished.
  bool query() const;
  /// Waits on the host until all work enqueued so far has finished.
  void synchronize() const;

  bool operator==(const CUDAStream& o) const { return stream_ == o.stream_ && device_ == o.device_; }
  bool operator!=(const CUDAStream& o) const { return !(*this == o); }

 private:
  Handle stream_;
  int device_;
};

std::ostream& operator<<(std::ostream& os, const CUDAStream& s);

/// The default stream of `device` (current device when -1).
CUDAStream getDefaultCUDAStream(int device = -1);
/// The calling thread's current stream on `device`; the default stream until set.
CUDAStream getCurrentCUDAStream(int device = -1);
/// Makes `stream` current on its device for the calling thread.
void setCurrentCUDAStream(CUDAStream stream);
/// A stream from the device's pool (created once, reused round-robin); high priority on request.
CUDAStream getStreamFromPool(bool high_priority = false, int device = -1);

/// Makes a stream (and its device) current for a scope (c10::cuda::CUDAStreamGuard).
class CUDAStreamGuard {
 public:
  explicit CUDAStreamGuard(CUDAStream stream);
  ~CUDAStreamGuard();
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard& operator=(const CUDAStreamGuard&) = delete;

 private:
  CUDAStream original_stream_;
  int original_device_;
};

}  // namespace ember::cuda
