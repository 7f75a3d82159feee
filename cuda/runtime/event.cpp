// CUDAEvent (cuda/runtime/event.h) on the CUDA runtime.
#include "ember/cuda/runtime/event.h"

#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/device.h"

namespace ember::cuda {

CUDAEvent::~CUDAEvent() {
  if (!event_) return;
  // On the event's own device, restoring the current one; errors are ignored (no throw from
  // a destructor, and at exit the driver may already be gone).
  int current = -1;
  cudaGetDevice(&current);
  if (current != device_) cudaSetDevice(device_);
  cudaEventDestroy(event_);
  if (current >= 0 && current != device_) cudaSetDevice(current);
}

void CUDAEvent::record() { record(getCurrentCUDAStream()); }

void CUDAEvent::record(const CUDAStream& stream) {
  if (!event_) {
    // Created on first use, on the recording stream's device: an event belongs to one device.
    DeviceGuard guard(stream.device_index());
    unsigned flags = (enable_timing_ ? cudaEventDefault : cudaEventDisableTiming) |
                     (blocking_ ? cudaEventBlockingSync : 0u);
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
    device_ = stream.device_index();
  }
  EMBER_CHECK(device_ == stream.device_index(), "Event device ", device_,
              " does not match recording stream's device ", stream.device_index(), ".");
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaEventRecord(event_, stream.stream()));
  was_recorded_ = true;
}

void CUDAEvent::recordOnce(const CUDAStream& stream) {
  if (!was_recorded_) record(stream);
}

void CUDAEvent::block(const CUDAStream& stream) {
  if (!event_) return;
  DeviceGuard guard(stream.device_index());
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(stream.stream(), event_, 0));
}

bool CUDAEvent::query() const {
  if (!event_) return true;
  cudaError_t err = cudaEventQuery(event_);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();  // "not ready" is an answer, not an error
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void CUDAEvent::synchronize() const {
  if (event_) EMBER_CUDA_CHECK(cudaEventSynchronize(event_));
}

float CUDAEvent::elapsed_time(const CUDAEvent& end) const {
  EMBER_CHECK(enable_timing_ && end.enable_timing_,
              "Both events must be created with argument 'enable_timing=True'.");
  EMBER_CHECK(isCreated() && end.isCreated(),
              "Both events must be recorded before calculating elapsed time.");
  EMBER_CHECK(query() && end.query(), "Both events must be completed before calculating elapsed time.");
  // On the event's device: asking from a device without a context would create one.
  DeviceGuard guard(device_);
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, event_, end.event_));
  return ms;
}

}  // namespace ember::cuda
