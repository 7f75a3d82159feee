// Upsample (libtorch's torch/nn/modules/upsampling.h): F::interpolate as a layer without
// parameters, printed as PyTorch's repr.
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/upsampling.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/upsampling.h"

namespace ember {
namespace nn {

/// Resizes (N, C, W), (N, C, H, W) or (N, C, D, H, W) input to options.size() or by
/// options.scale_factor() in options.mode().
class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  /// Python's repr: "Upsample(scale_factor=2.0, mode='nearest')", "Upsample(size=(4, 5), mode='bilinear')".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  UpsampleOptions options;
};
EMBER_MODULE(Upsample);

}  // namespace nn
}  // namespace ember
