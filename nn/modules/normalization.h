// LayerNorm, GroupNorm, LocalResponseNorm and CrossMapLRN2d (libtorch's
// torch/nn/modules/normalization.h), with PyTorch's initialisation (weight 1, bias 0) and
// Python-style printing.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/normalization.h"

namespace ember {
namespace nn {

/// Normalises over the trailing normalized_shape dims; weight and bias of that shape.
class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  LayerNormImpl(std::vector<int64_t> normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(LayerNormOptions options_);
  void reset() override;
  /// weight to 1, bias to 0.
  void reset_parameters();
  /// Python's repr: "LayerNorm((4,), eps=1e-05, elementwise_affine=True)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LayerNormOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(LayerNorm);

/// Normalises groups of channels of (N, C, *) inputs; per-channel weight and bias.
class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options_);
  void reset() override;
  void reset_parameters();
  /// Python's repr: "GroupNorm(2, 4, eps=1e-05, affine=True)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  GroupNormOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(GroupNorm);

/// Normalises each channel by the mean square over size neighbouring channels (AlexNet's LRN).
class LocalResponseNormImpl : public Cloneable<LocalResponseNormImpl> {
 public:
  LocalResponseNormImpl(int64_t size) : LocalResponseNormImpl(LocalResponseNormOptions(size)) {}
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options_) : options(options_) {}
  Tensor forward(const Tensor& input);
  void reset() override {}
  /// Python's repr: "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)".
  void pretty_print(std::ostream& stream) const override;

  LocalResponseNormOptions options;
};
EMBER_MODULE(LocalResponseNorm);

/// Lua Torch's SpatialCrossMapLRN over (N, C, H, W) inputs: x / (k + alpha / size * S)^beta,
/// S the running sum of squares PyTorch's CrossMapLRN2d computes (see the .cpp).
class CrossMapLRN2dImpl : public Cloneable<CrossMapLRN2dImpl> {
 public:
  CrossMapLRN2dImpl(int64_t size) : CrossMapLRN2dImpl(CrossMapLRN2dOptions(size)) {}
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options_) : options(options_) {}
  void reset() override {}
  /// Python's repr: "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  CrossMapLRN2dOptions options;
};
EMBER_MODULE(CrossMapLRN2d);

}  // namespace nn
}  // namespace ember
