// ProcessGroupNCCL: c10d's NCCL backend for CUDA tensors. One communicator per device, made
// lazily at the first collective on it (rank 0's ncclUniqueId travels through the store);
// collectives run on the group's own stream per communicator, ordered after the caller's
// current stream with events; a watchdog thread aborts communicators whose work runs past its
// timeout, so a dead peer gives an error instead of a hang. Built when CUDA and NCCL are
// found; otherwise constructing one raises (dist/no_nccl.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ember/dist/process_group.h"
#include "ember/dist/store.h"

namespace ember::dist {

/// c10d's ProcessGroupNCCL::Options.
struct ProcessGroupNCCLOptions {
  /// How long a collective may run before the watchdog aborts it (and the communicator).
  std::chrono::milliseconds timeout = kBackendDefaultTimeout;
  /// c10d's is_high_priority_stream: the group's streams get high priority.
  bool is_high_priority_stream = false;
  /// When >= 0, the communicator of this device is made in the constructor (eager init, as
  /// init_process_group(device_id=...)); otherwise at the first collective on a device.
  int device_id = -1;
};

class ProcessGroupNCCL : public ProcessGroup {
 public:
  using Options = ProcessGroupNCCLOptions;

  /// Whether this build has the NCCL backend (torch.distributed.is_nccl_available()).
  static bool is_available();
  /// The version of the NCCL library this process loaded, "2.27.3" (torch.cuda.nccl.version()
  /// as text); "" in a build without NCCL.
  static std::string version();

  /// Every rank of the group passes the same store (or prefix stores with one prefix).
  /// Raises without a GPU. Ranks meet at the first collective (or here with device_id).
  ProcessGroupNCCL(const std::shared_ptr<Store>& store, int rank, int size, Options options = Options());
  ~ProcessGroupNCCL() override;

  std::string getBackendName() const override { return "nccl"; }
  const Options& options() const { return options_; }

  intrusive_ptr<Work> allreduce(std::vector<Tensor>& tensors,
                                const AllreduceOptions& opts = AllreduceOptions()) override;
  intrusive_ptr<Work> broadcast(std::vector<Tensor>& tensors,
                                const BroadcastOptions& opts = BroadcastOptions()) override;
  intrusive_ptr<Work> reduce(std::vector<Tensor>& tensors,
                             const ReduceOptions& opts = ReduceOptions()) override;
  intrusive_ptr<Work> allgather(std::vector<std::vector<Tensor>>& outputTensors,
                                std::vector<Tensor>& inputTensors,
                                const AllgatherOptions& opts = AllgatherOptions()) override;
  intrusive_ptr<Work> reduce_scatter(std::vector<Tensor>& outputTensors,
                                     std::vector<std::vector<Tensor>>& inputTensors,
                                     const ReduceScatterOptions& opts = ReduceScatterOptions()) override;
  /// A one-element allreduce, whose Work::wait also blocks the host until it has finished.
  intrusive_ptr<Work> barrier(const BarrierOptions& opts = BarrierOptions()) override;
  /// Point-to-point on a two-rank communicator of this rank and the peer (tag is unused, as in c10d).
  intrusive_ptr<Work> send(std::vector<Tensor>& tensors, int dstRank, int tag) override;
  intrusive_ptr<Work> recv(std::vector<Tensor>& tensors, int srcRank, int tag) override;

 private:
  struct Impl;  // communicators, streams, the watchdog; NCCL's and CUDA's headers stay out of this one
  std::shared_ptr<Store> store_;
  Options options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::dist
