// The profiler, as torch.profiler: a Profile scope records every op run (its name, input
// shapes and dtypes, CPU start/end, thread, memory allocated and, for CUDA tensors, the device
// time between two CUDA events around it), the autograd engine's backward nodes and the
// user's RecordFunction scopes; key_averages().table() prints PyTorch's summary table and
// export_chrome_trace() writes a trace that Perfetto and chrome://tracing open.
//
// PyTorch                                             ember
//   from torch.profiler import profile, ...              #include <ember/core/profiler.h>
//                                                        using namespace ember::profiler;
//   with profile(activities=[ProfilerActivity.CPU],      { Profile prof({ProfilerActivity::CPU},
//                record_shapes=True,                                  /*record_shapes=*/true,
//                profile_memory=True) as prof:                        /*profile_memory=*/true);
//       with record_function("step"):                      { RecordFunction step("step");
//           loss = model(x).sum()                            loss = model->forward(x).sum(); }
//       loss.backward()                                    loss.backward();
//                                                          prof.stop();   // leaving the `with`
//   print(prof.key_averages().table(                       std::cout << prof.key_averages().table(
//         sort_by="cpu_time_total", row_limit=10))                  "cpu_time_total", 10);
//   prof.key_averages(group_by_input_shape=True)           prof.key_averages(true)
//   prof.export_chrome_trace("trace.json")                 prof.export_chrome_trace("trace.json"); }
//   prof.events()                                          prof.events()
//
// The Profile records from construction to stop() (or its destructor); the results stay
// readable on it afterwards, and reading them stops a profile still running. One profile
// runs at a time, for every thread of the process. Names follow PyTorch's: ops "aten::mm",
// in-place ops "aten::add_", the engine's "autograd::engine::evaluate_function: MmBackward0"
// around each backward node, and the node itself ("MmBackward0") around its apply.
//
// Note [Profiler accounting]
// Times are host wall-clock (steady_clock) from entering to leaving the range; "self" is the
// total less the totals of the ranges directly nested in it on the same thread. Memory is the
// change of the allocator's in-use bytes across the range (CPU: cpu_allocator_stats(); CUDA:
// cuda::memory_allocated of the op's device): allocations made by other threads meanwhile
// are counted too, so memory figures are exact only when one thread runs ops. CUDA time is
// the time between two events recorded on the op's device's current stream at the range's
// ends, resolved when the profile stops: it includes any gap in which the GPU waited for the
// host, so for tiny ops it is an upper bound of the kernels' time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ember/core/profiler_hook.h"

namespace ember::profiler {

enum class ProfilerActivity { CPU, CUDA };

/// What a range is; the chrome trace's "cat".
enum class EventKind {
  kOp,              // an op run by run_op, or the engine's backward node ranges ("cpu_op")
  kUserAnnotation,  // a RecordFunction scope ("user_annotation")
};

/// One recorded range (PyTorch's FunctionEvent). Times in nanoseconds from the profile's start.
struct FunctionEvent {
  std::string name;
  EventKind kind = EventKind::kOp;
  uint64_t thread_id = 0;  // the OS thread id
  std::vector<std::vector<int64_t>> input_shapes;  // with record_shapes; [] for a 0-dim input
  std::vector<std::string> input_types;            // PyTorch's "Input type" names ("float")
  int64_t start_ns = 0, end_ns = 0;
  int64_t self_cpu_time_ns = 0;
  int64_t cpu_memory_usage = 0, self_cpu_memory_usage = 0;  // bytes, with profile_memory
  int device_index = -1;  // the CUDA device of the op's inputs; -1 for CPU
  int64_t device_time_ns = 0, self_device_time_ns = 0;      // with ProfilerActivity::CUDA
  int64_t device_memory_usage = 0, self_device_memory_usage = 0;
  int64_t device_start_ns = -1;  // on the profile's clock, estimated from a reference event
  int64_t parent = -1;           // index of the enclosing range (same thread) in events(), or -1
  int64_t cpu_time_total_ns() const { return end_ns - start_ns; }
};

/// The statistics of one group of events (PyTorch's FunctionEventAvg). Times in nanoseconds.
struct FunctionEventAvg {
  std::string key;
  std::vector<std::vector<int64_t>> input_shapes;  // set when grouped by input shape
  int64_t count = 0;
  int64_t cpu_time_total_ns = 0, self_cpu_time_total_ns = 0;
  int64_t device_time_total_ns = 0, self_device_time_total_ns = 0;
  int64_t cpu_memory_usage = 0, self_cpu_memory_usage = 0;
  int64_t device_memory_usage = 0, self_device_memory_usage = 0;
  double cpu_time_avg_ns() const { return count ? double(cpu_time_total_ns) / double(count) : 0.0; }
  double device_time_avg_ns() const { return count ? double(device_time_total_ns) / double(count) : 0.0; }
};

/// prof.key_averages(): one FunctionEventAvg per name (and input shapes, when grouped), in the
/// order the groups first occur.
class KeyAverages {
 public:
  KeyAverages(std::vector<FunctionEventAvg> groups, bool profile_memory, bool use_cuda)
      : groups_(std::move(groups)), profile_memory_(profile_memory), use_cuda_(use_cuda) {}
  const std::vector<FunctionEventAvg>& events() const { return groups_; }
  size_t size() const { return groups_.size(); }
  const FunctionEventAvg& operator[](size_t i) const { return groups_[i]; }
  /// The group named `key` (the first, when grouped by shape); nullptr if none.
  const FunctionEventAvg* find(std::string_view key) const;
  /// PyTorch's summary table. sort_by: "cpu_time_total", "self_cpu_time_total", "cpu_time"
  /// (average), "cuda_time_total", "self_cuda_time_total", "cuda_time", the "device_..."
  /// spellings of those, "cpu_memory_usage", "self_cpu_memory_usage", "cuda_memory_usage",
  /// "self_cuda_memory_usage", "count", or "" for the groups' own order; largest first.
  std::string table(std::string_view sort_by = "", int64_t row_limit = 100, int64_t max_name_column_width = 55,
                    int64_t max_shapes_column_width = 80) const;

 private:
  std::vector<FunctionEventAvg> groups_;
  bool profile_memory_;
  bool use_cuda_;
};

/// Groups events by name (and by input shapes when asked): what Profile::key_averages uses,
/// public so that tables of hand-made events can be checked.
KeyAverages key_averages(const std::vector<FunctionEvent>& events, bool group_by_input_shape, bool profile_memory,
                         bool use_cuda);

/// The Chrome trace JSON of `events` (what export_chrome_trace writes).
std::string chrome_trace_json(const std::vector<FunctionEvent>& events);

/// A profiling session (torch.profiler.profile). Starts recording on construction.
class Profile {
 public:
  explicit Profile(std::initializer_list<ProfilerActivity> activities = {ProfilerActivity::CPU},
                   bool record_shapes = false, bool profile_memory = false);
  explicit Profile(const std::vector<ProfilerActivity>& activities, bool record_shapes = false,
                   bool profile_memory = false);
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  /// Stops recording (leaving PyTorch's `with` block) and resolves CUDA times; idempotent.
  void stop();
  bool running() const { return running_; }
  /// Every recorded range, ordered by start time.
  const std::vector<FunctionEvent>& events();
  KeyAverages key_averages(bool group_by_input_shape = false);
  /// Writes the Chrome trace JSON to `path` atomically (core/atomic_file.h).
  void export_chrome_trace(const std::string& path);

 private:
  uint64_t session_ = 0;
  bool running_ = false;
  bool profile_memory_ = false;
  bool use_cuda_ = false;
  std::vector<FunctionEvent> events_;
};

/// A named user scope (torch.profiler.record_function): a range in the table and the trace.
/// Records nothing while no profile runs.
class RecordFunction {
 public:
  explicit RecordFunction(std::string name, EventKind kind = EventKind::kUserAnnotation);
  ~RecordFunction();
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  uint64_t token_ = 0;
};

}  // namespace ember::profiler
