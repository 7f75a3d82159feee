// The profiler's recording side: the per-thread buffers that run_op's OpRange and
// RecordFunction write ranges into while a Profile runs, and the Profile that starts a
// session, stops it, and turns the raw ranges into FunctionEvents (CUDA times resolved from
// their events). The table and the Chrome trace are in core/profiler_report.cpp.
//
// Note [Profiler threads]
// Every thread that records gets a ThreadBuffer, registered with the running session under
// g_mu the first time it records in that session and cached in a thread_local. Ranges nest
// per thread (they are RAII scopes), so a stack of open indices gives each range its parent.
// A token (the session id) ties a range's end to the session it began in: a range that
// outlives its profile, or ends after a new profile started, is simply dropped. stop() marks
// each buffer closed under the buffer's mutex, so a range ending on another thread afterwards
// writes nothing; ranges still open at stop end at the stop time.
#include "ember/core/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>

#include "ember/core/allocator.h"
#include "ember/core/atomic_file.h"
#include "ember/core/error.h"
#include "ember/cuda/runtime/caching_allocator.h"
#include "ember/cuda/runtime/event.h"

namespace ember::profiler {
namespace detail {
std::atomic<bool> g_enabled{false};
}  // namespace detail

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t os_thread_id() {
  static thread_local uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  return tid;
}

struct Config {
  bool record_shapes = false;
  bool profile_memory = false;
  bool cuda = false;
  int64_t start_ns = 0;  // the session's zero on the steady clock
};

using EventPtr = std::unique_ptr<cuda::CUDAEvent>;

/// One range as recorded; times relative to the session's start.
struct RawEvent {
  std::string name;
  EventKind kind = EventKind::kOp;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> types;
  int64_t start_ns = 0, end_ns = -1;
  int64_t parent = -1;  // index in the same buffer
  int device = -1;
  int64_t cpu_mem_begin = 0, cpu_mem_end = 0, dev_mem_begin = 0, dev_mem_end = 0;
  EventPtr dev_start, dev_end;
};

/// A CUDA event recorded the first time a device is used, with the host time then: device
/// start times are placed on the host clock relative to it (for the trace's GPU rows).
struct DeviceReference {
  int device;
  EventPtr event;
  int64_t host_ns;
};

struct ThreadBuffer {
  std::mutex mu;
  uint64_t session = 0;
  uint64_t tid = 0;
  Config cfg;
  bool closed = false;
  std::vector<RawEvent> events;
  std::vector<size_t> open;
  std::vector<DeviceReference> refs;
};

struct Session {
  uint64_t id = 0;
  Config cfg;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};

std::mutex g_mu;                       // guards g_session and its buffer list
std::shared_ptr<Session> g_session;    // the running profile, if any
std::atomic<uint64_t> g_session_id{0};  // its id (0: none), read without the lock
std::atomic<uint64_t> g_next_id{1};
thread_local std::shared_ptr<ThreadBuffer> t_buffer;

/// This thread's buffer in the running session, registering it on first use; null if none.
ThreadBuffer* current_buffer() {
  uint64_t sid = g_session_id.load(std::memory_order_acquire);
  if (sid == 0) return nullptr;
  if (t_buffer && t_buffer->session == sid) return t_buffer.get();
  std::lock_guard<std::mutex> g(g_mu);
  if (!g_session || g_session->id != sid) return nullptr;
  auto b = std::make_shared<ThreadBuffer>();
  b->session = sid;
  b->tid = os_thread_id();
  b->cfg = g_session->cfg;
  g_session->buffers.push_back(b);
  t_buffer = b;
  return b.get();
}

int64_t cpu_bytes() { return static_cast<int64_t>(cpu_allocator_stats().allocated_bytes); }
int64_t device_bytes(int device) { return static_cast<int64_t>(cuda::memory_allocated(device)); }

/// Records a reference event for `device` on this thread's buffer if it has none yet.
void ensure_reference(ThreadBuffer& b, int device) {
  for (const DeviceReference& r : b.refs)
    if (r.device == device) return;
  auto ev = std::make_unique<cuda::CUDAEvent>(/*enable_timing=*/true);
  ev->record(cuda::getCurrentCUDAStream(device));
  b.refs.push_back({device, std::move(ev), now_ns() - b.cfg.start_ns});
}

uint64_t open_range(std::string name, EventKind kind, const Tensor* inputs, size_t n) {
  ThreadBuffer* b = current_buffer();
  if (!b) return 0;
  std::lock_guard<std::mutex> g(b->mu);
  if (b->closed) return 0;
  RawEvent e;
  e.name = std::move(name);
  e.kind = kind;
  e.parent = b->open.empty() ? -1 : static_cast<int64_t>(b->open.back());
  for (size_t i = 0; i < n; ++i)
    if (inputs[i].defined()) {
      if (inputs[i].device().is_cuda()) e.device = inputs[i].device().index();
      break;
    }
  if (b->cfg.record_shapes)
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = inputs[i];
      e.shapes.emplace_back(t.defined() ? std::vector<int64_t>(t.sizes().begin(), t.sizes().end())
                                        : std::vector<int64_t>{});
      e.types.emplace_back(t.defined() ? type_meta_name(t.dtype()) : "");
    }
  if (b->cfg.profile_memory) {
    e.cpu_mem_begin = cpu_bytes();
    if (e.device >= 0) e.dev_mem_begin = device_bytes(e.device);
  }
  if (b->cfg.cuda && e.device >= 0) {
    ensure_reference(*b, e.device);
    e.dev_start = std::make_unique<cuda::CUDAEvent>(/*enable_timing=*/true);
    e.dev_start->record(cuda::getCurrentCUDAStream(e.device));
  }
  b->open.push_back(b->events.size());
  e.start_ns = now_ns() - b->cfg.start_ns;  // last, so the bookkeeping above is not the op's time
  b->events.push_back(std::move(e));
  return b->session;
}

void close_range(uint64_t token) {
  int64_t t = now_ns();
  ThreadBuffer* b = t_buffer.get();
  if (!b || b->session != token) return;
  std::lock_guard<std::mutex> g(b->mu);
  if (b->closed || b->open.empty()) return;
  RawEvent& e = b->events[b->open.back()];
  b->open.pop_back();
  e.end_ns = t - b->cfg.start_ns;
  if (b->cfg.profile_memory) {
    e.cpu_mem_end = cpu_bytes();
    if (e.device >= 0) e.dev_mem_end = device_bytes(e.device);
  }
  if (e.dev_start) {
    e.dev_end = std::make_unique<cuda::CUDAEvent>(/*enable_timing=*/true);
    e.dev_end->record(cuda::getCurrentCUDAStream(e.device));
  }
}

std::string op_event_name(const char* name, detail::OpKind kind) {
  std::string out = "aten::";
  out += name;
  if (kind == detail::OpKind::kInplace && out.back() != '_') out += '_';
  return out;
}

int64_t ms_to_ns(float ms) { return static_cast<int64_t>(std::llround(double(ms) * 1e6)); }

/// The FunctionEvent of one closed raw event (CUDA events resolved; waits for the device).
FunctionEvent resolve(const ThreadBuffer& b, RawEvent& r) {
  FunctionEvent e;
  e.name = std::move(r.name);
  e.kind = r.kind;
  e.thread_id = b.tid;
  e.input_shapes = std::move(r.shapes);
  e.input_types = std::move(r.types);
  e.start_ns = r.start_ns;
  e.end_ns = r.end_ns;
  e.device_index = r.device;
  e.cpu_memory_usage = r.cpu_mem_end - r.cpu_mem_begin;
  e.device_memory_usage = r.dev_mem_end - r.dev_mem_begin;
  if (r.dev_start && r.dev_end) {
    r.dev_end->synchronize();
    e.device_time_ns = ms_to_ns(r.dev_start->elapsed_time(*r.dev_end));
    for (const DeviceReference& ref : b.refs)
      if (ref.device == r.device) e.device_start_ns = ref.host_ns + ms_to_ns(ref.event->elapsed_time(*r.dev_start));
  }
  return e;
}

}  // namespace

namespace detail {

uint64_t begin_op(const char* name, const Tensor* inputs, size_t n, OpKind kind) noexcept {
  try {
    return open_range(op_event_name(name, kind), EventKind::kOp, inputs, n);
  } catch (...) {  // a profiler failure (out of memory, a CUDA error) must not fail the op
    return 0;
  }
}

void end_op(uint64_t token) noexcept {
  try {
    close_range(token);
  } catch (...) {
  }
}

}  // namespace detail

namespace {

/// Self figures: each event's total less the totals of the events directly inside it.
void compute_self(std::vector<FunctionEvent>& events) {
  for (FunctionEvent& e : events) {
    e.self_cpu_time_ns = e.cpu_time_total_ns();
    e.self_cpu_memory_usage = e.cpu_memory_usage;
    e.self_device_time_ns = e.device_time_ns;
    e.self_device_memory_usage = e.device_memory_usage;
  }
  for (const FunctionEvent& e : events) {
    if (e.parent < 0) continue;
    FunctionEvent& p = events[static_cast<size_t>(e.parent)];
    p.self_cpu_time_ns -= e.cpu_time_total_ns();
    p.self_cpu_memory_usage -= e.cpu_memory_usage;
    p.self_device_time_ns -= e.device_time_ns;
    p.self_device_memory_usage -= e.device_memory_usage;
  }
}

}  // namespace

Profile::Profile(std::initializer_list<ProfilerActivity> activities, bool record_shapes, bool profile_memory)
    : Profile(std::vector<ProfilerActivity>(activities), record_shapes, profile_memory) {}

Profile::Profile(const std::vector<ProfilerActivity>& activities, bool record_shapes, bool profile_memory) {
  auto session = std::make_shared<Session>();
  session->id = g_next_id.fetch_add(1);
  session->cfg.record_shapes = record_shapes;
  session->cfg.profile_memory = profile_memory;
  session->cfg.cuda = std::find(activities.begin(), activities.end(), ProfilerActivity::CUDA) != activities.end();
  session->cfg.start_ns = now_ns();
  std::lock_guard<std::mutex> g(g_mu);
  EMBER_CHECK(!g_session, "Profiler is already enabled: only one profile may run at a time");
  session_ = session->id;
  profile_memory_ = profile_memory;
  use_cuda_ = session->cfg.cuda;
  g_session = std::move(session);
  g_session_id.store(session_, std::memory_order_release);
  detail::g_enabled.store(true, std::memory_order_release);
  running_ = true;
}

Profile::~Profile() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; the results are lost with the object anyway
  }
}

void Profile::stop() {
  if (!running_) return;
  running_ = false;
  std::shared_ptr<Session> s;
  {
    std::lock_guard<std::mutex> g(g_mu);
    detail::g_enabled.store(false, std::memory_order_release);
    g_session_id.store(0, std::memory_order_release);
    s = std::move(g_session);
  }
  if (!s) return;  // cannot happen while running_: the session is only taken here
  int64_t stop_ns = now_ns() - s->cfg.start_ns;
  std::vector<FunctionEvent> all;
  for (auto& b : s->buffers) {
    std::lock_guard<std::mutex> g(b->mu);
    b->closed = true;
    for (size_t i : b->open) {  // still open: end now, with no memory or device figure
      RawEvent& r = b->events[i];
      r.end_ns = stop_ns;
      r.cpu_mem_end = r.cpu_mem_begin;
      r.dev_mem_end = r.dev_mem_begin;
    }
    const int64_t base = static_cast<int64_t>(all.size());
    for (RawEvent& r : b->events) {
      FunctionEvent e = resolve(*b, r);
      e.parent = r.parent < 0 ? -1 : base + r.parent;
      all.push_back(std::move(e));
    }
    b->events.clear();
    b->refs.clear();
  }
  // Order by start time; parents start before their children, and ties keep buffer order.
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return all[a].start_ns < all[b].start_ns; });
  std::vector<int64_t> new_index(all.size());
  for (size_t i = 0; i < order.size(); ++i) new_index[order[i]] = static_cast<int64_t>(i);
  events_.clear();
  events_.reserve(all.size());
  for (size_t i : order) {
    FunctionEvent& e = all[i];
    if (e.parent >= 0) e.parent = new_index[static_cast<size_t>(e.parent)];
    events_.push_back(std::move(e));
  }
  compute_self(events_);
}

const std::vector<FunctionEvent>& Profile::events() {
  stop();
  return events_;
}

KeyAverages Profile::key_averages(bool group_by_input_shape) {
  return profiler::key_averages(events(), group_by_input_shape, profile_memory_, use_cuda_);
}

void Profile::export_chrome_trace(const std::string& path) {
  std::string json = chrome_trace_json(events());
  ember::detail::write_file_atomic(path, [&](ember::detail::AtomicFileWriter& w) { w.write(json.data(), json.size()); });
}

RecordFunction::RecordFunction(std::string name, EventKind kind) {
  if (!is_enabled()) return;
  try {
    token_ = open_range(std::move(name), kind, nullptr, 0);
  } catch (...) {
    token_ = 0;
  }
}

RecordFunction::~RecordFunction() {
  if (token_ != 0) detail::end_op(token_);
}

}  // namespace ember::profiler
