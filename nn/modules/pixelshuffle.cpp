// PixelShuffle and PixelUnshuffle: forward is the functional form, pretty_print Python's repr.
#include "ember/nn/modules/pixelshuffle.h"

namespace ember {
namespace nn {

void PixelShuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}

Tensor PixelShuffleImpl::forward(const Tensor& input) { return functional::pixel_shuffle(input, options); }

void PixelUnshuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "PixelUnshuffle(downscale_factor=" << options.downscale_factor() << ")";
}

Tensor PixelUnshuffleImpl::forward(const Tensor& input) {
  return functional::pixel_unshuffle(input, options);
}

}  // namespace nn
}  // namespace ember
