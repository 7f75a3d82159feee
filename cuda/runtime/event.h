// CUDA events as at::cuda::CUDAEvent (torch.cuda.Event): a marker recorded on a stream, which
// the host can query or wait for, another stream can wait on, and two of which give the time
// between them. Created lazily on the first record, on the recording stream's device.
// Plain C++: the CUDA handle is carried as an opaque pointer.
#pragma once

#include <utility>

#include "ember/cuda/runtime/stream.h"

struct CUevent_st;  // the CUDA runtime's event object (cudaEvent_t is CUevent_st*)

namespace ember::cuda {

class CUDAEvent {
 public:
  using Handle = CUevent_st*;
  /// enable_timing: elapsed_time works (timing makes recording slightly dearer);
  /// blocking: synchronize() sleeps instead of spinning (cudaEventBlockingSync).
  explicit CUDAEvent(bool enable_timing = false, bool blocking = false)
      : enable_timing_(enable_timing), blocking_(blocking) {}
  ~CUDAEvent();
  CUDAEvent(const CUDAEvent&) = delete;
  CUDAEvent& operator=(const CUDAEvent&) = delete;
  CUDAEvent(CUDAEvent&& other) noexcept { swap(other); }
  CUDAEvent& operator=(CUDAEvent&& other) noexcept {
    if (this != &other) swap(other);
    return *this;
  }

  /// Records the event on the current stream of the current device.
  void record();
  /// Records the event on `stream` (after everything enqueued there so far). An event lives
  /// on one device: recording it on another device's stream raises.
  void record(const CUDAStream& stream);
  /// Records on `stream` unless the event was recorded before.
  void recordOnce(const CUDAStream& stream);
  /// Makes future work on `stream` wait until the event has completed (no host wait);
  /// nothing to wait for if the event was never recorded.
  void block(const CUDAStream& stream);
  /// Whether the work before the event has finished (true if never recorded).
  bool query() const;
  /// Waits on the host until the work before the event has finished.
  void synchronize() const;
  /// Milliseconds from this event to `end`; both need enable_timing and must have completed.
  float elapsed_time(const CUDAEvent& end) const;

  bool isCreated() const { return event_ != nullptr; }
  bool was_recorded() const { return was_recorded_; }
  /// The event's device; -1 until first recorded.
  int device_index() const { return device_; }
  Handle event() const { return event_; }

 private:
  void swap(CUDAEvent& other) noexcept {
    std::swap(enable_timing_, other.enable_timing_);
    std::swap(blocking_, other.blocking_);
    std::swap(was_recorded_, other.was_recorded_);
    std::swap(device_, other.device_);
    std::swap(event_, other.event_);
  }
  bool enable_timing_ = false;
  bool blocking_ = false;
  bool was_recorded_ = false;
  int device_ = -1;
  Handle event_ = nullptr;
};

}  // namespace ember::cuda
