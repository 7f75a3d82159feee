// BatchNorm1d/2d/3d (libtorch's torch/nn/modules/batchnorm.h): learnable per-channel weight
// and bias, and the buffers running_mean, running_var and num_batches_tracked (the names
// that appear in state_dict keys, as PyTorch's).
#pragma once

#include <cstdint>
#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/batchnorm.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/batchnorm.h"

namespace ember {
namespace nn {

/// What the D-dimensional batch norms share; Derived supplies the input-rank check.
template <size_t D, class Derived>
class BatchNormImplBase : public Cloneable<Derived> {
 public:
  explicit BatchNormImplBase(const BatchNormOptions& options_) : options(options_) {}

  /// Registers weight and bias (ones / zeros, or undefined without affine) and the running
  /// statistics buffers (zeros / ones / 0, or undefined without track_running_stats).
  void reset() override;
  /// Running mean to 0, running variance to 1, num_batches_tracked to 0.
  void reset_running_stats();
  /// reset_running_stats(), then weight to 1 and bias to 0.
  void reset_parameters();
  /// Normalises with batch statistics while training (updating the running ones) and with
  /// the running statistics in evaluation (batch statistics if there are none).
  Tensor forward(const Tensor& input);
  /// Python's repr: "BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)".
  void pretty_print(std::ostream& stream) const override;

  BatchNormOptions options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;

 protected:
  /// Raises PyTorch's "expected 4D input (got 2D input)" for a wrong input rank.
  virtual void check_input_dim(const Tensor& input) const = 0;
};

/// Batch norm over (N, C) or (N, C, L) inputs.
class BatchNorm1dImpl : public BatchNormImplBase<1, BatchNorm1dImpl> {
 public:
  /*implicit*/ BatchNorm1dImpl(const BatchNormOptions& options_) : BatchNormImplBase(options_) { reset(); }
  explicit BatchNorm1dImpl(int64_t num_features) : BatchNorm1dImpl(BatchNormOptions(num_features)) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm1d);

/// Batch norm over (N, C, H, W) inputs.
class BatchNorm2dImpl : public BatchNormImplBase<2, BatchNorm2dImpl> {
 public:
  /*implicit*/ BatchNorm2dImpl(const BatchNormOptions& options_) : BatchNormImplBase(options_) { reset(); }
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNormOptions(num_features)) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm2d);

/// Batch norm over (N, C, D, H, W) inputs.
class BatchNorm3dImpl : public BatchNormImplBase<3, BatchNorm3dImpl> {
 public:
  /*implicit*/ BatchNorm3dImpl(const BatchNormOptions& options_) : BatchNormImplBase(options_) { reset(); }
  explicit BatchNorm3dImpl(int64_t num_features) : BatchNorm3dImpl(BatchNormOptions(num_features)) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm3d);

extern template class BatchNormImplBase<1, BatchNorm1dImpl>;
extern template class BatchNormImplBase<2, BatchNorm2dImpl>;
extern template class BatchNormImplBase<3, BatchNorm3dImpl>;

}  // namespace nn
}  // namespace ember
