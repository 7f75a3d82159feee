// ProcessGroupNCCL on NCCL (dist/process_group_nccl.h).
//
// Communicators, as c10d's: one per device for collectives, made at the first collective on
// that device (or in the constructor when options.device_id is set), and one per pair of ranks
// for send/recv (two-rank communicators, so a send between two ranks does not need the others).
// The maker of a communicator (rank 0; the lower rank of a pair) draws the ncclUniqueId and
// sets it in the store under dist/nccl_plan.h's key; the others get it from there.
// Communicators are non-blocking (ncclConfig_t.blocking = 0): every NCCL call is followed by
// polling ncclCommGetAsyncError while it reports ncclInProgress, with a deadline, so a peer
// that never arrives at the rendezvous gives an error instead of a hang.
//
// Streams and events: each communicator has its own stream from the pool. A collective
// records an event on the caller's current stream and makes the NCCL stream wait for it (so
// it sees the inputs as the caller's stream left them), enqueues the NCCL call (and any
// packing copies) on the NCCL stream, and records the Work's end event there. The input and
// output tensors are record_stream'ed on the NCCL stream, so the caching allocator does not
// hand their memory out again before NCCL is done with it. Work::wait() makes the caller's
// current stream wait for the end event (no host block, as c10d); with a timeout, and for a
// barrier, it also waits on the host by polling the end event.
//
// The watchdog thread polls every in-flight Work's end event (cudaEventQuery) and its
// communicator's asynchronous error. A Work past its timeout, or an NCCL error, aborts the
// communicator (ncclCommAbort makes its kernels return), and every Work on it finishes with
// the error, which Work::wait() raises; later calls on that communicator raise too.
#include "ember/dist/process_group_nccl.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/cuda/runtime/caching_allocator.h"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/runtime/event.h"
#include "ember/cuda/runtime/stream.h"
#include "ember/dist/nccl_plan.h"

namespace ember::dist {

using namespace nccl_plan;  // NOLINT: this file is the plan's one user

// The plan mirrors NCCL's enums by value.
static_assert(static_cast<int>(NcclDataType::Int8) == ncclInt8 &&
              static_cast<int>(NcclDataType::Uint8) == ncclUint8 &&
              static_cast<int>(NcclDataType::Int32) == ncclInt32 &&
              static_cast<int>(NcclDataType::Int64) == ncclInt64 &&
              static_cast<int>(NcclDataType::Float16) == ncclFloat16 &&
              static_cast<int>(NcclDataType::Float32) == ncclFloat32 &&
              static_cast<int>(NcclDataType::Float64) == ncclFloat64 &&
              static_cast<int>(NcclDataType::Bfloat16) == ncclBfloat16);
static_assert(static_cast<int>(NcclRedOp::Sum) == ncclSum && static_cast<int>(NcclRedOp::Prod) == ncclProd &&
              static_cast<int>(NcclRedOp::Max) == ncclMax && static_cast<int>(NcclRedOp::Min) == ncclMin &&
              static_cast<int>(NcclRedOp::Avg) == ncclAvg);

namespace {

ncclDataType_t to_nccl(ScalarType t) { return static_cast<ncclDataType_t>(nccl_data_type(t)); }
ncclRedOp_t to_nccl(ReduceOp op, ScalarType t) { return static_cast<ncclRedOp_t>(nccl_reduce_op(op, t)); }

// c10d's text for a failed NCCL call: the call, NCCL's words, its version, its last error.
[[noreturn]] void throw_nccl_error(ncclResult_t r, const char* what, ncclComm_t comm) {
  std::string last = ncclGetLastError(comm);
  ::ember::detail::throw_error(::ember::detail::str_cat(
      "NCCL error in: ", what, ", ", ncclGetErrorString(r), ", NCCL version ", NCCL_MAJOR, ".", NCCL_MINOR,
      ".", NCCL_PATCH, last.empty() ? "" : "\nLast error:\n", last));
}

// Waits while a non-blocking communicator reports the call in progress (NCCL's rule: no other
// call on it until then); raises on an error, or when `deadline` passes.
void nccl_settle(ncclResult_t r, const char* what, ncclComm_t comm, Clock::time_point deadline) {
  while (r == ncclInProgress) {
    if (Clock::now() > deadline)
      ::ember::detail::throw_error(
          ::ember::detail::str_cat("NCCL error in: ", what, ": timed out while NCCL was still in progress"));
    std::this_thread::yield();
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) break;
  }
  if (r != ncclSuccess) throw_nccl_error(r, what, comm);
}

// A communicator, its stream, and the event that orders that stream after the caller's.
struct Comm {
  ncclComm_t comm = nullptr;
  int device = -1;
  cuda::CUDAStream stream{nullptr, 0};
  cuda::CUDAEvent sync_event;
  std::mutex mutex;  // held around NCCL calls and the abort, which must not overlap
  bool aborted = false;
  std::string abort_reason;

  // Aborts once; later calls raise `reason`.
  void abort(const std::string& reason) {
    std::lock_guard<std::mutex> lock(mutex);
    if (aborted) return;
    aborted = true;
    abort_reason = reason;
    ncclCommAbort(comm);
    comm = nullptr;
  }
};

class WorkNCCL final : public Work {
 public:
  WorkNCCL(int rank, std::vector<Tensor> outputs, WorkRecord record, std::shared_ptr<Comm> comm,
           bool is_barrier)
      : Work(rank, std::move(outputs)), record_(record), comm_(std::move(comm)), is_barrier_(is_barrier) {}

  const WorkRecord& record() const { return record_; }
  Comm& comm() { return *comm_; }
  cuda::CUDAEvent& end_event() { return end_event_; }
  void stash(Tensor t) { stashed_.push_back(std::move(t)); }

  // Finishes once (the watchdog and a waiting thread may both try).
  void finish_once(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (completed_) return;
      completed_ = true;
      error_ = std::move(error);
      stashed_.clear();
    }
    cv_.notify_all();
  }

  // Whether the end event has passed (or the work has an error); never waits for the GPU.
  bool is_completed() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (completed_) return true;
    }
    bool done = false;
    try {
      cuda::DeviceGuard guard(comm_->device);
      done = end_event_.query();
    } catch (...) {
      finish_once(std::current_exception());
      return true;
    }
    if (!done) return false;
    // An aborted communicator's kernels return early: its event passing is not success.
    std::lock_guard<std::mutex> comm_lock(comm_->mutex);
    finish_once(comm_->aborted ? std::make_exception_ptr(Error(comm_->abort_reason)) : nullptr);
    return true;
  }

  bool is_success() override {
    EMBER_CHECK(is_completed(), "Work::is_success: the operation has not completed yet");
    return exception() == nullptr;
  }

  // c10d's WorkNCCL::wait: the caller's current stream waits for the work (no host block);
  // with a timeout, or for a barrier, the host also waits until it has finished.
  bool wait(std::chrono::milliseconds timeout) override {
    rethrow_if_failed();
    {
      cuda::DeviceGuard guard(comm_->device);
      end_event_.block(cuda::getCurrentCUDAStream(comm_->device));
    }
    if (timeout != kNoTimeout || is_barrier_) {
      auto deadline = Clock::now() + (timeout != kNoTimeout ? timeout : record_.timeout);
      while (!is_completed()) {
        // Without a caller's timeout the watchdog ends a barrier that runs too long.
        if (timeout != kNoTimeout && Clock::now() > deadline)
          ::ember::detail::throw_error("Operation timed out!");
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    rethrow_if_failed();
    return true;
  }

 private:
  void rethrow_if_failed() {
    std::exception_ptr e = exception();
    if (e) std::rethrow_exception(e);
  }

  WorkRecord record_;
  std::shared_ptr<Comm> comm_;
  bool is_barrier_;
  cuda::CUDAEvent end_event_;
  std::vector<Tensor> stashed_;  // temporaries NCCL reads or writes until the work ends
};

}  // namespace

// ---- the group -------------------------------------------------------------------------

struct ProcessGroupNCCL::Impl {
  ProcessGroupNCCL* group = nullptr;

  std::mutex comms_mutex;  // guards comms, comm_counter, last_device, seq
  std::map<std::string, std::shared_ptr<Comm>> comms;
  uint64_t comm_counter = 0;
  int last_device = -1;
  uint64_t seq = 0;

  std::mutex watch_mutex;
  std::condition_variable watch_cv;
  std::vector<intrusive_ptr<WorkNCCL>> in_flight;
  bool stop = false;
  std::thread watchdog;

  // The communicator for `key` on `device`, made (with the rendezvous) on first use. For a
  // pair's communicator `peer` is the other rank; -1 for the group's.
  std::shared_ptr<Comm> comm_for(int device, int peer) {
    const int rank = group->rank();
    const bool p2p = peer >= 0;
    std::string key =
        p2p ? "p2p:" + p2p_key(rank, peer) + ":" + std::to_string(device) : std::to_string(device);
    std::lock_guard<std::mutex> lock(comms_mutex);
    auto it = comms.find(key);
    if (it != comms.end()) return it->second;

    const int nranks = p2p ? 2 : group->size();
    const int comm_rank = p2p ? p2p_rank(rank, peer) : rank;
    const std::string store_key = p2p ? p2p_key(rank, peer) : unique_id_key(comm_counter++);
    ncclUniqueId id;
    if (comm_rank == 0) {
      ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess) throw_nccl_error(r, "ncclGetUniqueId", nullptr);
      std::vector<uint8_t> bytes(reinterpret_cast<uint8_t*>(&id),
                                 reinterpret_cast<uint8_t*>(&id) + sizeof(id));
      group->store_->set(store_key, bytes);
    } else {
      std::vector<uint8_t> bytes = group->store_->get(store_key);
      EMBER_CHECK(bytes.size() == sizeof(id), "ProcessGroupNCCL: the ncclUniqueId under store key '",
                  store_key, "' has ", bytes.size(), " bytes, expected ", sizeof(id));
      std::memcpy(&id, bytes.data(), sizeof(id));
    }

    auto entry = std::make_shared<Comm>();
    entry->device = device;
    cuda::DeviceGuard guard(device);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&entry->comm, nranks, id, comm_rank, &config);
    try {
      nccl_settle(r, "ncclCommInitRankConfig", entry->comm, Clock::now() + group->options_.timeout);
    } catch (...) {
      if (entry->comm) ncclCommAbort(entry->comm);
      throw;
    }
    entry->stream = cuda::getStreamFromPool(group->options_.is_high_priority_stream, device);
    comms.emplace(key, entry);
    return entry;
  }

  // Runs one NCCL operation on `device`: orders the communicator's stream after the caller's
  // current stream, runs `pre` (packing copies), `call`, then `post` (unpacking copies) on
  // it, and records the Work's end event. `tensors`: the user's tensors NCCL touches.
  intrusive_ptr<Work> run(OpType op, int device, int peer, std::vector<Tensor> tensors,
                          std::vector<Tensor> outputs, int64_t numel_in, int64_t numel_out,
                          std::chrono::milliseconds timeout,
                          const std::function<ncclResult_t(ncclComm_t, cudaStream_t)>& call,
                          const std::function<void(WorkNCCL&)>& pre = {},
                          const std::function<void(WorkNCCL&)>& post = {}, bool is_barrier = false) {
    cuda::DeviceGuard guard(device);
    auto comm = comm_for(device, peer);
    WorkRecord record;
    {
      std::lock_guard<std::mutex> lock(comms_mutex);
      record.seq = ++seq;
      last_device = device;
    }
    record.op = op;
    record.numel_in = numel_in;
    record.numel_out = numel_out;
    record.timeout = timeout;
    record.start = Clock::now();
    auto work = intrusive_ptr<WorkNCCL>::make(peer, std::move(outputs), record, comm, is_barrier);
    {
      std::lock_guard<std::mutex> lock(comm->mutex);
      EMBER_CHECK(!comm->aborted, "NCCL communicator was aborted on rank ", group->rank(), ". ",
                  comm->abort_reason);
      comm->sync_event.record(cuda::getCurrentCUDAStream(device));
      comm->sync_event.block(comm->stream);
      cuda::CUDAStreamGuard on_nccl_stream(comm->stream);
      NoGradGuard no_grad;  // the packing copies are not autograd ops
      if (pre) pre(*work);
      nccl_settle(call(comm->comm, comm->stream.stream()), op_type_name(op), comm->comm,
                  Clock::now() + timeout);
      if (post) post(*work);
      work->end_event().record(comm->stream);
    }
    for (const auto& t : tensors) cuda::record_stream(t, comm->stream);
    {
      // The watchdog finds it at its next poll (no wake-up: a scan per enqueue would cost
      // an event query per in-flight work each time).
      std::lock_guard<std::mutex> lock(watch_mutex);
      in_flight.push_back(work);
    }
    return work;
  }

  // ---- the watchdog ----

  void watchdog_loop() {
    std::unique_lock<std::mutex> lock(watch_mutex);
    while (!stop) {
      watch_cv.wait_for(lock, std::chrono::milliseconds(100));
      std::vector<intrusive_ptr<WorkNCCL>> works = in_flight;
      lock.unlock();  // event queries and aborts happen without the lock enqueueing takes
      std::vector<const WorkNCCL*> done;
      for (auto& w : works) {
        check_work(*w);
        if (w->is_completed()) done.push_back(w.get());
      }
      lock.lock();
      std::erase_if(in_flight, [&](const intrusive_ptr<WorkNCCL>& w) {
        return std::find(done.begin(), done.end(), w.get()) != done.end();
      });
    }
  }

  void check_work(WorkNCCL& w) {
    if (w.is_completed()) return;
    Comm& comm = w.comm();
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(comm.mutex);
      if (comm.aborted) {
        reason = comm.abort_reason;
      } else {
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm.comm, &async);
        if (async != ncclSuccess && async != ncclInProgress)
          reason =
              ::ember::detail::str_cat("[Rank ", group->rank(), "] NCCL error: ", ncclGetErrorString(async),
                                       " while running ", work_description(w.record()));
      }
    }
    if (reason.empty() && timed_out(w.record(), Clock::now()))
      reason = timeout_message(group->rank(), w.record(), Clock::now());
    if (reason.empty()) return;
    comm.abort(reason);
    fail_all_on(comm, reason);
  }

  // Every in-flight work on an aborted communicator finishes with its error.
  void fail_all_on(Comm& comm, const std::string& reason) {
    std::vector<intrusive_ptr<WorkNCCL>> works;
    {
      std::lock_guard<std::mutex> lock(watch_mutex);
      works = in_flight;
    }
    for (auto& w : works)
      if (&w->comm() == &comm) w->finish_once(std::make_exception_ptr(Error(reason)));
  }
};

bool ProcessGroupNCCL::is_available() { return true; }

std::string ProcessGroupNCCL::version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown (ncclGetVersion failed)";
  // NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

ProcessGroupNCCL::ProcessGroupNCCL(const std::shared_ptr<Store>& store, int rank, int size, Options options)
    : ProcessGroup(rank, size), store_(store), options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  EMBER_CHECK(store_ != nullptr, "ProcessGroupNCCL: store is null");
  EMBER_CHECK(options_.timeout.count() > 0, "ProcessGroupNCCL: timeout must be positive");
  EMBER_CHECK(cuda::device_count() > 0, "ProcessGroupNCCL is only supported with GPUs, no GPUs found!");
  impl_->group = this;
  if (options_.device_id >= 0) {
    EMBER_CHECK(options_.device_id < cuda::device_count(), "ProcessGroupNCCL: invalid device_id ",
                options_.device_id);
    impl_->comm_for(options_.device_id, -1);
  }
  // Last: a constructor that raised above leaves no thread to join.
  impl_->watchdog = std::thread([this] { impl_->watchdog_loop(); });
}

ProcessGroupNCCL::~ProcessGroupNCCL() {
  // Work still on the GPU finishes first (the watchdog, still running, ends any that runs
  // past its timeout), so a group destroyed right after an async collective does not abort it.
  for (;;) {
    std::vector<intrusive_ptr<WorkNCCL>> works;
    {
      std::lock_guard<std::mutex> lock(impl_->watch_mutex);
      works = impl_->in_flight;
    }
    bool pending = std::any_of(works.begin(), works.end(), [](auto& w) { return !w->is_completed(); });
    if (!pending) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(impl_->watch_mutex);
    impl_->stop = true;
  }
  impl_->watch_cv.notify_all();
  if (impl_->watchdog.joinable()) impl_->watchdog.join();
  // Finalize (flush) each live communicator, bounded by the timeout, then destroy it; one that
  // does not finalize in time is aborted.
  for (auto& [key, comm] : impl_->comms) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    if (comm->aborted || !comm->comm) continue;
    bool finalized = true;
    try {
      cuda::DeviceGuard guard(comm->device);
      nccl_settle(ncclCommFinalize(comm->comm), "ncclCommFinalize", comm->comm,
                  Clock::now() + options_.timeout);
    } catch (...) {  // a destructor does not raise: a failed flush aborts instead
      finalized = false;
    }
    if (finalized) {
      ncclCommDestroy(comm->comm);
    } else {
      ncclCommAbort(comm->comm);
    }
    comm->comm = nullptr;
  }
}

// ---- collectives -----------------------------------------------------------------------

intrusive_ptr<Work> ProcessGroupNCCL::allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) {
  check_single_tensor(tensors.size());
  Tensor t = tensors[0];
  check_gpu_tensor(t);
  ncclDataType_t dt = to_nccl(t.dtype());
  ncclRedOp_t op = to_nccl(opts.reduceOp, t.dtype());
  auto n = static_cast<size_t>(t.numel());
  return impl_->run(OpType::ALLREDUCE, t.device().index(), -1, {t}, {t}, t.numel(), t.numel(),
                    effective_timeout(opts.timeout, options_.timeout),
                    [t, n, dt, op](ncclComm_t comm, cudaStream_t s) {
                      return ncclAllReduce(t.data_ptr(), t.data_ptr(), n, dt, op, comm, s);
                    });
}

intrusive_ptr<Work> ProcessGroupNCCL::broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts) {
  check_single_tensor(tensors.size());
  check_root("ProcessGroupNCCL::broadcast", opts.rootRank, size());
  EMBER_CHECK(opts.rootTensor == 0, "ProcessGroupNCCL::broadcast: invalid root tensor: ", opts.rootTensor);
  Tensor t = tensors[0];
  check_gpu_tensor(t);
  ncclDataType_t dt = to_nccl(t.dtype());
  auto n = static_cast<size_t>(t.numel());
  int root = static_cast<int>(opts.rootRank);
  return impl_->run(OpType::BROADCAST, t.device().index(), -1, {t}, {t}, t.numel(), t.numel(),
                    effective_timeout(opts.timeout, options_.timeout),
                    [t, n, dt, root](ncclComm_t comm, cudaStream_t s) {
                      return ncclBroadcast(t.data_ptr(), t.data_ptr(), n, dt, root, comm, s);
                    });
}

intrusive_ptr<Work> ProcessGroupNCCL::reduce(std::vector<Tensor>& tensors, const ReduceOptions& opts) {
  check_single_tensor(tensors.size());
  check_root("ProcessGroupNCCL::reduce", opts.rootRank, size());
  EMBER_CHECK(opts.rootTensor == 0, "ProcessGroupNCCL::reduce: invalid root tensor: ", opts.rootTensor);
  Tensor t = tensors[0];
  check_gpu_tensor(t);
  ncclDataType_t dt = to_nccl(t.dtype());
  ncclRedOp_t op = to_nccl(opts.reduceOp, t.dtype());
  auto n = static_cast<size_t>(t.numel());
  int root = static_cast<int>(opts.rootRank);
  // In place: NCCL writes the receive buffer on the root only, so other ranks keep their values.
  return impl_->run(OpType::REDUCE, t.device().index(), -1, {t}, {t}, t.numel(), t.numel(),
                    effective_timeout(opts.timeout, options_.timeout),
                    [t, n, dt, op, root](ncclComm_t comm, cudaStream_t s) {
                      return ncclReduce(t.data_ptr(), t.data_ptr(), n, dt, op, root, comm, s);
                    });
}

// NCCL gathers into one flat buffer on the NCCL stream; the ranks' parts are then copied into
// the output tensors there.
intrusive_ptr<Work> ProcessGroupNCCL::allgather(std::vector<std::vector<Tensor>>& outputTensors,
                                                std::vector<Tensor>& inputTensors,
                                                const AllgatherOptions& opts) {
  check_single_tensor(inputTensors.size());
  check_single_tensor(outputTensors.size());
  Tensor in = inputTensors[0];
  check_gpu_tensor(in);
  std::vector<Tensor> outs = outputTensors[0];
  check_tensor_list(outs, in, size());
  ncclDataType_t dt = to_nccl(in.dtype());
  const int64_t n = in.numel();
  const int64_t world = size();
  auto flat = std::make_shared<Tensor>();
  std::vector<Tensor> touched = outs;
  touched.push_back(in);
  return impl_->run(
      OpType::ALLGATHER, in.device().index(), -1, touched, outs, n, n * world,
      effective_timeout(opts.timeout, options_.timeout),
      [in, flat, n, dt](ncclComm_t comm, cudaStream_t s) {
        return ncclAllGather(in.data_ptr(), flat->data_ptr(), static_cast<size_t>(n), dt, comm, s);
      },
      [flat, in, n, world](WorkNCCL& w) {
        *flat = empty({n * world}, in.options());  // allocated for the NCCL stream (current here)
        w.stash(*flat);
      },
      [flat, outs, n](WorkNCCL&) mutable {
        for (size_t r = 0; r < outs.size(); ++r)
          outs[r].view({n}).copy_(flat->narrow(0, static_cast<int64_t>(r) * n, n));
      });
}

// The ranks' inputs are packed into one flat buffer on the NCCL stream; NCCL reduces it and
// scatters this rank's part into the output.
intrusive_ptr<Work> ProcessGroupNCCL::reduce_scatter(std::vector<Tensor>& outputTensors,
                                                     std::vector<std::vector<Tensor>>& inputTensors,
                                                     const ReduceScatterOptions& opts) {
  check_single_tensor(outputTensors.size());
  check_single_tensor(inputTensors.size());
  Tensor out = outputTensors[0];
  check_gpu_tensor(out);
  std::vector<Tensor> ins = inputTensors[0];
  check_tensor_list(ins, out, size());
  ncclDataType_t dt = to_nccl(out.dtype());
  ncclRedOp_t op = to_nccl(opts.reduceOp, out.dtype());
  const int64_t n = out.numel();
  const int64_t world = size();
  auto flat = std::make_shared<Tensor>();
  std::vector<Tensor> touched = ins;
  touched.push_back(out);
  return impl_->run(
      OpType::REDUCE_SCATTER, out.device().index(), -1, touched, {out}, n * world, n,
      effective_timeout(opts.timeout, options_.timeout),
      [out, flat, n, dt, op](ncclComm_t comm, cudaStream_t s) {
        return ncclReduceScatter(flat->data_ptr(), out.data_ptr(), static_cast<size_t>(n), dt, op, comm, s);
      },
      [flat, ins, out, n, world](WorkNCCL& w) mutable {
        *flat = empty({n * world}, out.options());
        w.stash(*flat);
        for (size_t r = 0; r < ins.size(); ++r)
          flat->narrow(0, static_cast<int64_t>(r) * n, n).copy_(ins[r].view({n}));
      });
}

intrusive_ptr<Work> ProcessGroupNCCL::barrier(const BarrierOptions& opts) {
  int last;
  {
    std::lock_guard<std::mutex> lock(impl_->comms_mutex);
    last = impl_->last_device;
  }
  int device = barrier_device(opts.device_ids, last, rank(), cuda::device_count());
  Tensor t = zeros({1}, TensorOptions().dtype(kFloat).device(Device(kCUDA, static_cast<int8_t>(device))));
  return impl_->run(
      OpType::BARRIER, device, -1, {t}, {}, 1, 1, effective_timeout(opts.timeout, options_.timeout),
      [t](ncclComm_t comm, cudaStream_t s) {
        return ncclAllReduce(t.data_ptr(), t.data_ptr(), 1, ncclFloat32, ncclSum, comm, s);
      },
      {}, {}, /*is_barrier=*/true);
}

intrusive_ptr<Work> ProcessGroupNCCL::send(std::vector<Tensor>& tensors, int dstRank, int /*tag*/) {
  check_single_tensor(tensors.size());
  Tensor t = tensors[0];
  check_gpu_tensor(t);
  check_peer(dstRank, rank(), size(), "destination");
  ncclDataType_t dt = to_nccl(t.dtype());
  auto n = static_cast<size_t>(t.numel());
  int peer_in_comm = 1 - p2p_rank(rank(), dstRank);
  return impl_->run(OpType::SEND, t.device().index(), dstRank, {t}, {t}, t.numel(), t.numel(),
                    options_.timeout, [t, n, dt, peer_in_comm](ncclComm_t comm, cudaStream_t s) {
                      return ncclSend(t.data_ptr(), n, dt, peer_in_comm, comm, s);
                    });
}

intrusive_ptr<Work> ProcessGroupNCCL::recv(std::vector<Tensor>& tensors, int srcRank, int /*tag*/) {
  check_single_tensor(tensors.size());
  Tensor t = tensors[0];
  check_gpu_tensor(t);
  check_peer(srcRank, rank(), size(), "source");
  ncclDataType_t dt = to_nccl(t.dtype());
  auto n = static_cast<size_t>(t.numel());
  int peer_in_comm = 1 - p2p_rank(rank(), srcRank);
  return impl_->run(OpType::RECV, t.device().index(), srcRank, {t}, {t}, t.numel(), t.numel(),
                    options_.timeout, [t, n, dt, peer_in_comm](ncclComm_t comm, cudaStream_t s) {
                      return ncclRecv(t.data_ptr(), n, dt, peer_in_comm, comm, s);
                    });
}

}  // namespace ember::dist
