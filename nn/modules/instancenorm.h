// InstanceNorm1d/2d/3d (libtorch's torch/nn/modules/instancenorm.h): per-instance
// normalization with an optional per-channel weight and bias and optional running statistics
// (the buffers running_mean, running_var, num_batches_tracked, PyTorch's state_dict names).
#pragma once

#include <cstddef>
#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/instancenorm.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/instancenorm.h"

namespace ember {
namespace nn {

/// What the D-dimensional instance norms share; Derived supplies the input-rank check.
template <size_t D, class Derived>
class InstanceNormImpl : public Cloneable<Derived> {
 public:
  explicit InstanceNormImpl(const InstanceNormOptions& options_) : options(options_) {}

  /// Registers weight and bias (ones / zeros, or undefined without affine) and the running
  /// statistics buffers (zeros / ones / 0, or undefined without track_running_stats).
  void reset() override;
  /// Running mean to 0, running variance to 1, num_batches_tracked to 0.
  void reset_running_stats();
  /// reset_running_stats(), then weight to 1 and bias to 0.
  void reset_parameters();
  /// Normalises each instance by its own statistics while training or without running
  /// statistics (updating them when tracked), by the running statistics in evaluation.
  /// An input without the batch dim is treated as a batch of one.
  Tensor forward(const Tensor& input);
  /// Python's repr: "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)".
  void pretty_print(std::ostream& stream) const override;

  InstanceNormOptions options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;

 protected:
  /// Raises PyTorch's "expected 3D or 4D input (got 2D input)" for a wrong input rank.
  virtual void check_input_dim(const Tensor& input) const = 0;
};

/// Instance norm over (N, C, L) or unbatched (C, L) inputs.
class InstanceNorm1dImpl : public InstanceNormImpl<1, InstanceNorm1dImpl> {
 public:
  /*implicit*/ InstanceNorm1dImpl(const InstanceNormOptions& options_) : InstanceNormImpl(options_) {
    reset();
  }
  explicit InstanceNorm1dImpl(int64_t num_features) : InstanceNorm1dImpl(InstanceNormOptions(num_features)) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(InstanceNorm1d);

/// Instance norm over (N, C, H, W) or unbatched (C, H, W) inputs.
class InstanceNorm2dImpl : public InstanceNormImpl<2, InstanceNorm2dImpl> {
 public:
  /*implicit*/ InstanceNorm2dImpl(const InstanceNormOptions& options_) : InstanceNormImpl(options_) {
    reset();
  }
  explicit InstanceNorm2dImpl(int64_t num_features) : InstanceNorm2dImpl(InstanceNormOptions(num_features)) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(InstanceNorm2d);

/// Instance norm over (N, C, D, H, W) or unbatched (C, D, H, W) inputs.
class InstanceNorm3dImpl : public InstanceNormImpl<3, InstanceNorm3dImpl> {
 public:
  /*implicit*/ InstanceNorm3dImpl(const InstanceNormOptions& options_) : InstanceNormImpl(options_) {
    reset();
  }
  explicit InstanceNorm3dImpl(int64_t num_features) : InstanceNorm3dImpl(InstanceNormOptions(num_features)) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(InstanceNorm3d);

extern template class InstanceNormImpl<1, InstanceNorm1dImpl>;
extern template class InstanceNormImpl<2, InstanceNorm2dImpl>;
extern template class InstanceNormImpl<3, InstanceNorm3dImpl>;

}  // namespace nn
}  // namespace ember
