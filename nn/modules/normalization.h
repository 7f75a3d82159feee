// LayerNorm and GroupNorm (libtorch's torch/nn/modules/normalization.h), with PyTorch's
// initialisation (weight 1, bias 0) and Python-style printing.
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

}  // namespace nn
}  // namespace ember
