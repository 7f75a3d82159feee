// CUDA devices as libtorch's torch::cuda and c10::cuda present them: how many there are, which
// one is current for this thread, a guard that switches for a scope, and synchronize.
// Plain C++: no CUDA header, so core/ and users include it in builds without CUDA too.
#pragma once

#include "ember/core/device.h"

namespace ember::cuda {

/// Whether a CUDA device can be used (torch::cuda::is_available); false without CUDA.
bool is_available();
/// Number of visible CUDA devices (torch::cuda::device_count); 0 without CUDA.
int device_count();
/// The calling thread's current device (c10::cuda::current_device).
int current_device();
/// Makes `device` current for the calling thread (c10::cuda::set_device).
void set_device(int device);
/// Waits for all work on `device` (the current one when -1) to finish (torch::cuda::synchronize).
void synchronize(int device = -1);

/// Switches the current device for a scope and restores it afterwards (c10::cuda::CUDAGuard).
/// A CPU device, or a CUDA device without an index, leaves the current device as it is.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  explicit DeviceGuard(Device device) : DeviceGuard(device.is_cuda() ? device.index() : -1) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  int original_device() const { return original_; }

 private:
  int original_ = -1;  // -1: nothing to restore
};
using CUDAGuard = DeviceGuard;

}  // namespace ember::cuda
