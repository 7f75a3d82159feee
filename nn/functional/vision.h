// Spatial transformers, as libtorch's nn/functional/vision.h: affine_grid turns a batch of affine
// matrices into sampling grids, grid_sample reads an image at grid positions (bilinear or nearest,
// zeros / border / reflection padding), both 2-d (4-D input) and 3-d (5-D input). Built from
// tensor ops (gathers weighted by the interpolation factors), so gradients flow to the input and
// to the grid.
#pragma once

#include <optional>
#include <variant>

#include "ember/core/arg.h"
#include "ember/core/array_ref.h"
#include "ember/core/tensor.h"
#include "ember/nn/enums.h"

namespace ember::nn::functional {

/// The sampling grid of the affine maps theta (N, 2, 3) for size (N, C, H, W) -> (N, H, W, 2),
/// or theta (N, 3, 4) for size (N, C, D, H, W) -> (N, D, H, W, 3); coordinates in [-1, 1], x first.
Tensor affine_grid(const Tensor& theta, const IntArrayRef& size, bool align_corners = false);

struct GridSampleFuncOptions {
  using mode_t = std::variant<enumtype::kBilinear, enumtype::kNearest>;
  using padding_mode_t = std::variant<enumtype::kZeros, enumtype::kBorder, enumtype::kReflection>;
  /// bilinear (trilinear for 5-D input) or nearest.
  EMBER_ARG(mode_t, mode) = enumtype::kBilinear();
  /// What reads outside the image give: zeros, the border value, or the reflected image.
  EMBER_ARG(padding_mode_t, padding_mode) = enumtype::kZeros();
  /// -1 and 1 are the corner pixels' centres (true) or the image's outer edges (false, default).
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

/// input (N, C, H, W) sampled at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo); 5-D input (N, C, D, H, W)
/// with grid (N, Do, Ho, Wo, 3) -> (N, C, Do, Ho, Wo). Grid values are (x, y[, z]) in [-1, 1].
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});

}  // namespace ember::nn::functional
