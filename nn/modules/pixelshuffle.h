// PixelShuffle and PixelUnshuffle (libtorch's torch/nn/modules/pixelshuffle.h): the sub-pixel
// rearrangements of F::pixel_shuffle / F::pixel_unshuffle as layers without parameters.
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/pixelshuffle.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/pixelshuffle.h"

namespace ember {
namespace nn {

/// (*, C * r * r, H, W) -> (*, C, H * r, W * r).
class PixelShuffleImpl : public Cloneable<PixelShuffleImpl> {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options_) : options(options_) {}
  /// Python's repr: "PixelShuffle(upscale_factor=3)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  void reset() override {}

  PixelShuffleOptions options;
};
EMBER_MODULE(PixelShuffle);

/// (*, C, H * r, W * r) -> (*, C * r * r, H, W).
class PixelUnshuffleImpl : public Cloneable<PixelUnshuffleImpl> {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options_) : options(options_) {}
  /// Python's repr: "PixelUnshuffle(downscale_factor=2)".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  void reset() override {}

  PixelUnshuffleOptions options;
};
EMBER_MODULE(PixelUnshuffle);

}  // namespace nn
}  // namespace ember
