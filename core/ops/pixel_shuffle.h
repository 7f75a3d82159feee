// Pixel shuffle: moving r x r blocks of channels into space and back (the sub-pixel
// convolution's rearrangement), ATen's pixel_shuffle / pixel_unshuffle. Composites of
// view and permute, so autograd and every device come with them.
#pragma once

#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

/// (*, C * r * r, H, W) -> (*, C, H * r, W * r): out[c, h * r + i, w * r + j] =
/// in[c * r * r + i * r + j, h, w].
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);

/// The inverse of pixel_shuffle: (*, C, H * r, W * r) -> (*, C * r * r, H, W).
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor);

}  // namespace ember
