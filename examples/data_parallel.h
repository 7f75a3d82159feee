// What the Fashion-MNIST trainer needs from torch.distributed for `--dist gloo|nccl`, in one
// small class: join the process group the launcher describes (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT from ember-run or torchrun), wrap the model's training forward in
// DistributedDataParallel, give each rank its shard of the training set (DistributedSampler),
// and the few collectives the loop uses to agree (summed epoch metrics, rank 0's validation
// score). Without --dist every method is the single-process identity, so the trainer has one
// code path.
//
// The build without dist/ (-DEMBER_DIST=OFF) compiles this file with EMBER_EXAMPLE_DIST=0:
// then --dist raises and nothing else changes. That switch lives here only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ember/ember.h>

#ifndef EMBER_EXAMPLE_DIST
#define EMBER_EXAMPLE_DIST 1
#endif
#if EMBER_EXAMPLE_DIST
#include <ember/dist/dist.h>
#endif

namespace trainer {

class DataParallel {
 public:
  using Forward = std::function<ember::Tensor(const ember::Tensor&)>;

  /// backend: "off" (one process), "gloo" (CPU tensors) or "nccl" (one process per GPU:
  /// the device is cuda:LOCAL_RANK).
  explicit DataParallel(const std::string& backend) : backend_(backend) {
    if (backend_ == "off") return;
#if EMBER_EXAMPLE_DIST
    if (backend_ == "nccl") {
      const char* local = std::getenv("LOCAL_RANK");
      ember::cuda::set_device(local ? std::atoi(local) : 0);  // before NCCL picks its device
    }
    ember::dist::init_process_group(backend_);
    rank_ = ember::dist::get_rank();
    world_ = ember::dist::get_world_size();
#else
    throw std::runtime_error("--dist " + backend_ + ": this ember was built without dist/ (-DEMBER_DIST=OFF)");
#endif
  }
  ~DataParallel() {
#if EMBER_EXAMPLE_DIST
    if (enabled() && ember::dist::is_initialized()) ember::dist::destroy_process_group();
#endif
  }
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  bool enabled() const { return backend_ != "off"; }
  int rank() const { return rank_; }
  int world_size() const { return world_; }
  /// Only rank 0 writes files and logs (checkpoints, metrics, the best model, progress).
  bool is_main() const { return rank_ == 0; }
  /// The device this process trains on: cuda:LOCAL_RANK under --dist nccl, else `requested`.
  ember::Device device(const ember::Device& requested) const {
    if (backend_ == "nccl") return ember::Device(ember::kCUDA, static_cast<int8_t>(ember::cuda::current_device()));
    return requested;
  }

  /// Wraps `module` in DistributedDataParallel (which broadcasts rank 0's parameters and
  /// buffers now, averages the gradients during backward, and broadcasts rank 0's buffers
  /// before every forward) and returns the forward to train with. `forward` stays the plain
  /// one: evaluation runs on rank 0 alone and must not join collectives.
  Forward wrap(const std::shared_ptr<ember::nn::Module>& module, Forward forward) {
    if (!enabled()) return forward;
#if EMBER_EXAMPLE_DIST
    ddp_ = std::make_shared<ember::dist::DistributedDataParallelImpl>(module);
    return [ddp = ddp_, forward = std::move(forward)](const ember::Tensor& x) {
      ddp->pre_forward();  // the module's own forward(Tensor) is behind `forward`
      return forward(x);
    };
#else
    (void)module;
    return forward;
#endif
  }

  /// While the returned guard lives, backward does not average gradients (DDP's no_sync):
  /// for all but the last piece of a batch cut into micro-batches. Null when not distributed.
  std::shared_ptr<void> no_sync() {
#if EMBER_EXAMPLE_DIST
    if (ddp_) return std::make_shared<ember::dist::DistributedDataParallelImpl::NoSyncGuard>(*ddp_);
#endif
    return nullptr;
  }

  /// The training split's sampler: this rank's shard, reshuffled each epoch with `seed`
  /// (null when not distributed: the loader shuffles the whole split itself).
  std::shared_ptr<ember::data::samplers::DistributedSampler> sampler(int64_t size, uint64_t seed) const {
    if (!enabled()) return nullptr;
    return std::make_shared<ember::data::samplers::DistributedSampler>(static_cast<size_t>(size), world_, rank_,
                                                                        /*shuffle=*/true, seed);
  }

  /// Sums `values` over the ranks (epoch loss, correct predictions, examples seen).
  void sum(std::vector<double>& values) const { collective(values, /*broadcast_from_0=*/false); }
  /// Replaces `values` with rank 0's (its validation score, so every rank takes the same
  /// early-stopping decision).
  void from_rank0(std::vector<double>& values) const { collective(values, /*broadcast_from_0=*/true); }
  void barrier() const {
#if EMBER_EXAMPLE_DIST
    if (enabled()) ember::dist::barrier();
#endif
  }

 private:
  // On the device the backend takes: NCCL reduces CUDA tensors only.
  void collective(std::vector<double>& values, bool broadcast_from_0) const {
    if (!enabled() || values.empty()) return;
#if EMBER_EXAMPLE_DIST
    ember::Device where = backend_ == "nccl" ? device(ember::kCPU) : ember::Device(ember::kCPU);
    ember::Tensor t = ember::tensor(values, ember::TensorOptions().dtype(ember::kFloat64)).to(where);
    if (broadcast_from_0)
      ember::dist::broadcast(t, 0);
    else
      ember::dist::all_reduce(t);
    t = t.to(ember::Device(ember::kCPU));
    for (size_t i = 0; i < values.size(); ++i) values[i] = t[static_cast<int64_t>(i)].item<double>();
#endif
  }

  std::string backend_;
  int rank_ = 0, world_ = 1;
#if EMBER_EXAMPLE_DIST
  std::shared_ptr<ember::dist::DistributedDataParallelImpl> ddp_;
#endif
};

}  // namespace trainer
