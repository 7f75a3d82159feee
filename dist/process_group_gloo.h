// ProcessGroupGloo: c10d's gloo backend for CPU tensors. Ranks meet through an ember Store,
// connect a full mesh over gloo's TCP transport, and run each collective asynchronously on the
// group's worker threads in issue order. Built when Debian's libgloo-dev is found; otherwise
// constructing one raises (dist/no_gloo.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ember/dist/process_group.h"
#include "ember/dist/store.h"

namespace ember::dist {

/// c10d's ProcessGroupGloo::Options. The transport binds to `interface` when set, else to
/// `hostname` when set, else to GLOO_SOCKET_IFNAME's interface, else to this machine's
/// hostname when it resolves, else to the loopback address (c10d's createDefaultDevice).
struct ProcessGroupGlooOptions {
  std::chrono::milliseconds timeout = kBackendDefaultTimeout;
  std::string hostname;
  std::string interface;
  /// Worker threads that run collectives (c10d's default: 2).
  int threads = 2;
};

class ProcessGroupGloo : public ProcessGroup {
 public:
  using Options = ProcessGroupGlooOptions;

  /// Whether this build has the gloo backend (torch.distributed.is_gloo_available()).
  static bool is_available();

  /// Rendezvous through `store` (every rank of the group passes the same store, or prefix
  /// stores with the same prefix); blocks until all `size` ranks have joined or
  /// options.timeout passes (then raises).
  ProcessGroupGloo(const std::shared_ptr<Store>& store, int rank, int size, Options options = Options());
  ~ProcessGroupGloo() override;

  std::string getBackendName() const override { return "gloo"; }
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
  intrusive_ptr<Work> barrier(const BarrierOptions& opts = BarrierOptions()) override;
  intrusive_ptr<Work> send(std::vector<Tensor>& tensors, int dstRank, int tag) override;
  intrusive_ptr<Work> recv(std::vector<Tensor>& tensors, int srcRank, int tag) override;

 private:
  struct Impl;  // gloo's context and the work queue; gloo's headers stay out of this one
  std::shared_ptr<Store> store_;
  Options options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::dist
