// ProcessGroup: c10d's backend interface (collectives and point-to-point on a fixed set of
// ranks), its option structs, ReduceOp, and Work, the asynchronous handle every call returns.
// Backends: ProcessGroupGloo (dist/process_group_gloo.h) for CPU tensors.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/intrusive_ptr.h"
#include "ember/core/tensor.h"

namespace ember::dist {

/// c10d's kUnsetTimeout: an option struct's timeout that means "the group's default".
constexpr std::chrono::milliseconds kUnsetTimeout = std::chrono::milliseconds(-1);
/// c10d's kNoTimeout for Work::wait: wait as long as the collective takes.
constexpr std::chrono::milliseconds kNoTimeout = std::chrono::milliseconds::zero();
/// c10d's kBackendDefaultTimeout (torch.distributed's default_pg_timeout): 30 minutes.
constexpr std::chrono::milliseconds kBackendDefaultTimeout = std::chrono::minutes(30);

/// The reduction of allreduce/reduce/reduce_scatter (torch.distributed.ReduceOp).
struct ReduceOp {
  enum RedOpType : uint8_t { SUM = 0, AVG = 1, PRODUCT = 2, MIN = 3, MAX = 4, BAND = 5, BOR = 6, BXOR = 7 };
  ReduceOp(RedOpType op = SUM) : op_(op) {}   // NOLINT: implicit, as c10d's
  operator RedOpType() const { return op_; }  // NOLINT
  RedOpType op_;
};
/// "SUM", "AVG", ... as Python prints ReduceOp members.
const char* reduce_op_name(ReduceOp op);

struct AllreduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct BroadcastOptions {
  int64_t rootRank = 0;
  int64_t rootTensor = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ReduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  int64_t rootRank = 0;
  int64_t rootTensor = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct AllgatherOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ReduceScatterOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct BarrierOptions {
  std::vector<int64_t> device_ids;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

/// An issued collective or send/recv (c10d::Work). A backend finishes it exactly once with
/// finish(); wait() then returns or rethrows the collective's error on the waiting thread.
class Work : public intrusive_target {
 public:
  Work(int rank = -1, std::vector<Tensor> outputs = {});
  ~Work() override = default;

  /// Whether the operation has finished, successfully or not.
  virtual bool is_completed();
  /// Whether it finished without an error (raises if it has not finished).
  virtual bool is_success();
  /// Blocks until it finishes; rethrows its error. With a timeout other than kNoTimeout,
  /// raises "Operation timed out!" (c10d's words) when it has not finished by then.
  virtual bool wait(std::chrono::milliseconds timeout = kNoTimeout);
  /// The error it finished with (null while running or on success).
  virtual std::exception_ptr exception();
  /// The tensors holding its result (allreduce: the reduced tensors; recv: the buffer).
  virtual std::vector<Tensor> result();
  /// For recv from any source: the rank the data came from.
  virtual int source_rank() const;

  /// Marks it finished (called once by the backend, on its worker thread).
  void finish(std::exception_ptr error = nullptr);

 protected:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool completed_ = false;
  std::exception_ptr error_;
  int rank_;
  std::vector<Tensor> outputs_;
};

/// A group of ranks that run collectives together (c10d::Backend / ProcessGroup). Every rank
/// of the group must issue the same collectives in the same order.
class ProcessGroup : public intrusive_target {
 public:
  ProcessGroup(int rank, int size);
  ~ProcessGroup() override = default;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string getBackendName() const = 0;

  /// Reduces each rank's `tensors` in place: afterwards every rank holds the reduction.
  virtual intrusive_ptr<Work> allreduce(std::vector<Tensor>& tensors,
                                        const AllreduceOptions& opts = AllreduceOptions()) = 0;
  /// Copies opts.rootRank's tensor into every other rank's.
  virtual intrusive_ptr<Work> broadcast(std::vector<Tensor>& tensors,
                                        const BroadcastOptions& opts = BroadcastOptions()) = 0;
  /// The reduction lands in opts.rootRank's tensor only.
  virtual intrusive_ptr<Work> reduce(std::vector<Tensor>& tensors,
                                     const ReduceOptions& opts = ReduceOptions()) = 0;
  /// outputTensors[0][r] receives rank r's inputTensors[0].
  virtual intrusive_ptr<Work> allgather(std::vector<std::vector<Tensor>>& outputTensors,
                                        std::vector<Tensor>& inputTensors,
                                        const AllgatherOptions& opts = AllgatherOptions()) = 0;
  /// outputTensors[0] receives the reduction over ranks of each rank's inputTensors[0][rank].
  virtual intrusive_ptr<Work> reduce_scatter(std::vector<Tensor>& outputTensors,
                                             std::vector<std::vector<Tensor>>& inputTensors,
                                             const ReduceScatterOptions& opts = ReduceScatterOptions()) = 0;
  virtual intrusive_ptr<Work> barrier(const BarrierOptions& opts = BarrierOptions()) = 0;
  virtual intrusive_ptr<Work> send(std::vector<Tensor>& tensors, int dstRank, int tag) = 0;
  virtual intrusive_ptr<Work> recv(std::vector<Tensor>& tensors, int srcRank, int tag) = 0;

 protected:
  const int rank_;
  const int size_;
};

}  // namespace ember::dist
