// F::pixel_shuffle and F::pixel_unshuffle (torch.nn.functional's), over core/ops/pixel_shuffle.h.
#pragma once

#include "ember/core/ops/pixel_shuffle.h"
#include "ember/nn/options/pixelshuffle.h"

namespace ember {
namespace nn {
namespace functional {

inline Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options) {
  return ember::pixel_shuffle(input, options.upscale_factor());
}

inline Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options) {
  return ember::pixel_unshuffle(input, options.downscale_factor());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
