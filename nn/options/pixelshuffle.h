// Options of PixelShuffle / PixelUnshuffle and of F::pixel_shuffle / F::pixel_unshuffle, as
// libtorch spells them: PixelShuffleOptions(2), F::PixelUnshuffleFuncOptions(2).
#pragma once

#include <cstdint>

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// PixelShuffle(upscale_factor): r of (*, C * r * r, H, W) -> (*, C, H * r, W * r).
struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}
  EMBER_ARG(int64_t, upscale_factor);
};

/// PixelUnshuffle(downscale_factor): r of (*, C, H * r, W * r) -> (*, C * r * r, H, W).
struct PixelUnshuffleOptions {
  /*implicit*/ PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}
  EMBER_ARG(int64_t, downscale_factor);
};

namespace functional {
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
}  // namespace functional

}  // namespace nn
}  // namespace ember
