// DistributedDataParallel: data parallelism over a process group, as
// torch.nn.parallel.DistributedDataParallel. Every rank holds a replica of the module; at
// construction the ranks check that their parameters agree in number and shape and take rank
// 0's parameters and buffers. During backward, gradients are averaged across ranks in buckets
// whose allreduce starts as soon as the bucket's last gradient is accumulated, so
// communication overlaps the rest of backward; backward() returns with averaged .grad, ready
// for the optimizer. See Note [DDP's reducer] in distributed_data_parallel.cpp.
//
//   ember::dist::DistributedDataParallel ddp(model);   // the default group
//   auto loss = loss_fn(ddp->forward(x), y);
//   loss.backward();                                  // .grad averaged over the ranks
//   optimizer.step();
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ember/dist/distributed.h"
#include "ember/core/arg.h"
#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"

namespace ember::dist {

/// PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES: the first bucket (the last layers' gradients,
/// ready first in backward) is kept small so its allreduce starts early.
constexpr size_t kDefaultFirstBucketBytes = size_t{1} << 20;
/// DistributedDataParallel's default bucket_cap_mb.
constexpr double kDefaultBucketCapMB = 25.0;

struct DistributedDataParallelOptions {
  /// The bucket size cap in MiB. Unset: a first bucket of 1 MiB, then 25 MiB buckets (as
  /// PyTorch with bucket_cap_mb=None); set: every bucket up to this cap.
  EMBER_ARG(std::optional<double>, bucket_cap_mb) = std::nullopt;
  /// Copy rank 0's buffers (BatchNorm's running statistics) to every rank at each forward.
  EMBER_ARG(bool, broadcast_buffers) = true;
  /// Parameters that get no gradient in an iteration still take part in the allreduce (with
  /// zeros); without this, such a parameter makes the next forward raise.
  EMBER_ARG(bool, find_unused_parameters) = false;
};

/// What compute_bucket_assignment_by_size returns (PyTorch's (bucket_indices,
/// per_bucket_size_limits)).
struct BucketAssignment {
  std::vector<std::vector<size_t>> bucket_indices;  // tensor indices per bucket
  std::vector<size_t> per_bucket_size_limits;       // the byte cap each bucket was filled to
};

/// Groups tensors into buckets (dist._compute_bucket_assignment_by_size): tensors are taken in
/// `tensor_indices` order (default 0..n-1); tensors of one dtype and device share buckets; a
/// bucket closes once its bytes reach the current limit, and each (dtype, device) moves from
/// one limit of `bucket_size_limits` to the next after each closed bucket (staying on the
/// last). With tensor_indices given, buckets come in the order they were started; without,
/// sorted by their smallest index. Only sizes, dtypes and devices are read.
BucketAssignment compute_bucket_assignment_by_size(const std::vector<Tensor>& tensors,
                                                   const std::vector<size_t>& bucket_size_limits,
                                                   const std::vector<size_t>& tensor_indices = {});

namespace detail {
class Reducer;
}  // namespace detail

class DistributedDataParallelImpl : public nn::Module {
 public:
  /// Wraps `module` (registered as the submodule "module", so state_dict keys read
  /// "module.<name>" as PyTorch's DDP's do). `group`: the default group when null. Raises when
  /// the ranks' parameters differ in number or shape.
  template <class ModuleType>
  explicit DistributedDataParallelImpl(std::shared_ptr<ModuleType> module, ProcessGroupPtr group = {},
                                       DistributedDataParallelOptions options = {})
      : DistributedDataParallelImpl(std::static_pointer_cast<nn::Module>(module),
                                    tensor_forward(module.get()), std::move(group), std::move(options)) {}
  template <class ModuleType>
  explicit DistributedDataParallelImpl(const nn::ModuleHolder<ModuleType>& module, ProcessGroupPtr group = {},
                                       DistributedDataParallelOptions options = {})
      : DistributedDataParallelImpl(module.ptr(), std::move(group), std::move(options)) {}
  ~DistributedDataParallelImpl() override;

  /// Runs the wrapped module's forward(Tensor) after pre_forward().
  Tensor forward(const Tensor& input);
  /// What forward does before calling the module: raises if the previous synchronized
  /// backward did not finish its reduction, arms the gradient hooks for this iteration
  /// (unless inside no_sync() or with grad mode off) and broadcasts rank 0's buffers. Call it
  /// yourself before calling module() directly with other arguments.
  void pre_forward();

  /// The wrapped module (ddp.module in PyTorch).
  const std::shared_ptr<nn::Module>& module() const { return module_; }
  template <class ModuleType>
  std::shared_ptr<ModuleType> module_as() const {
    return std::dynamic_pointer_cast<ModuleType>(module_);
  }
  const ProcessGroupPtr& process_group() const { return group_; }
  const DistributedDataParallelOptions& options() const { return options_; }
  /// The buckets, as indices into the parameters that require grad, in allreduce order.
  std::vector<std::vector<size_t>> bucket_indices() const;

  /// While alive, forwards do not arm gradient synchronization: gradients accumulate locally
  /// in .grad, and the first backward after a forward outside the guard averages the sum.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelImpl& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelImpl& ddp_;
    bool previous_;
  };
  /// PyTorch's `with ddp.no_sync():` — `{ auto guard = ddp->no_sync(); ... }`.
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }
  /// Whether the next forward arms gradient synchronization (require_backward_grad_sync).
  bool require_backward_grad_sync() const { return require_backward_grad_sync_; }

 private:
  using TensorForward = std::function<Tensor(const Tensor&)>;
  DistributedDataParallelImpl(std::shared_ptr<nn::Module> module, TensorForward forward,
                              ProcessGroupPtr group, DistributedDataParallelOptions options);

  template <class ModuleType>
  static TensorForward tensor_forward(ModuleType* m) {
    if constexpr (requires(ModuleType & mm, const Tensor& x) {
                    { mm.forward(x) } -> std::convertible_to<Tensor>;
                  })
      return [m](const Tensor& x) -> Tensor { return m->forward(x); };
    else
      return nullptr;
  }

  void sync_buffers();

  std::shared_ptr<nn::Module> module_;
  TensorForward forward_;
  ProcessGroupPtr group_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<detail::Reducer> reducer_;
  bool require_backward_grad_sync_ = true;
};

/// The holder: `DistributedDataParallel ddp(model, group, options); ddp->forward(x)`.
EMBER_MODULE(DistributedDataParallel);

}  // namespace ember::dist
