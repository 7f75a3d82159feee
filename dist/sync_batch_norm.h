// SyncBatchNorm (torch.nn.SyncBatchNorm): batch norm whose training statistics are those of
// the whole batch spread over the ranks of a process group, and convert_sync_batchnorm,
// which swaps a model's BatchNorm*d layers for it.
//
// It lives in dist/ because it calls collectives (DESIGN.md's layers: dist -> nn, never
// nn -> dist), but in namespace ember::nn, where PyTorch puts it (torch.nn.SyncBatchNorm),
// so user code reads `nn::SyncBatchNorm` as in Python.
//
// Training, with more than one rank: each rank computes its batch's per-channel mean and
// biased variance and its count (values per channel); one allgather shares them; every rank
// combines them into the global mean and variance (Chan's parallel formula, as PyTorch's
// batch_norm_gather_stats_with_counts) and normalises with those. Backward all-reduces the
// per-channel sum(dy) and sum(dy (x - mean)), so the input gradient equals BatchNorm's on the
// concatenated batch; the weight and bias gradients stay local (as PyTorch's: DDP sums them).
// Evaluation, a world of one, or no initialised process group: plain batch norm.
// Unlike PyTorch (which requires GPU tensors), CPU tensors are synchronised too, over gloo.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include "ember/core/tensor.h"
#include "ember/dist/process_group.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/batchnorm.h"

namespace ember {
namespace nn {

/// SyncBatchNorm(num_features).eps(1e-5).momentum(0.1).affine(true).track_running_stats(true)
/// .process_group(group) (null: the default group, looked up at each forward).
struct SyncBatchNormOptions {
  /*implicit*/ SyncBatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  /// nullopt: cumulative average over num_batches_tracked batches.
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
  EMBER_ARG(intrusive_ptr<dist::ProcessGroup>, process_group) = intrusive_ptr<dist::ProcessGroup>();
};

class SyncBatchNormImpl : public Cloneable<SyncBatchNormImpl> {
 public:
  /*implicit*/ SyncBatchNormImpl(const SyncBatchNormOptions& options_);
  explicit SyncBatchNormImpl(int64_t num_features) : SyncBatchNormImpl(SyncBatchNormOptions(num_features)) {}

  /// weight/bias (ones/zeros, undefined without affine) and running_mean, running_var,
  /// num_batches_tracked (undefined without track_running_stats), named as BatchNorm's.
  void reset() override;
  void reset_running_stats();
  void reset_parameters();
  /// (N, C, *) input. Raises PyTorch's "expected at least 2D input (got 1D input)".
  Tensor forward(const Tensor& input);
  /// "SyncBatchNorm(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)".
  void pretty_print(std::ostream& stream) const override;

  /// torch.nn.SyncBatchNorm.convert_sync_batchnorm: a BatchNorm1d/2d/3d `module` gives a new
  /// SyncBatchNorm sharing its parameters and buffers (and training flag); any other module
  /// is returned itself with its BatchNorm*d descendants replaced. Sequential, ModuleList and
  /// ModuleDict are converted in place (forward then runs the new layers). A BatchNorm*d
  /// child of any other module is refused: C++ cannot rebind the parent's member handle, so
  /// its forward would keep calling the unsynchronised layer.
  static std::shared_ptr<Module> convert_sync_batchnorm(std::shared_ptr<Module> module,
                                                        intrusive_ptr<dist::ProcessGroup> process_group = {});

  SyncBatchNormOptions options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;

 private:
  /// `module` as a SyncBatchNorm when it is a BatchNorm1d/2d/3d; null otherwise.
  static std::shared_ptr<SyncBatchNormImpl> from_batch_norm(Module& module,
                                                            const intrusive_ptr<dist::ProcessGroup>& group);
};
EMBER_MODULE(SyncBatchNorm);

}  // namespace nn

namespace dist {

/// The synchronised training-mode batch norm itself (PyTorch's sync_batch_norm autograd
/// function): normalises `input` with the statistics of every rank's batch in `group`
/// (world_size ranks, all of which must call it), updates running_mean/running_var (when
/// defined) with the global mean and unbiased variance, and records a backward that
/// all-reduces the gradient sums. weight and bias may be undefined.
Tensor sync_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       const Tensor& running_mean, const Tensor& running_var, double eps, double momentum,
                       const intrusive_ptr<ProcessGroup>& group);

}  // namespace dist
}  // namespace ember
