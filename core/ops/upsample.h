// Upsampling (resizing) of (N, C, W), (N, C, H, W) and (N, C, D, H, W) tensors: nearest,
// (bi/tri)linear and bicubic, with PyTorch's source-index formulas. A given scale (scale_factor) is used as is to place the
// samples; otherwise the scale is input_size / output_size.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// Nearest: output o reads input min(floor(o * scale), in - 1) along each axis.
Tensor upsample_nearest1d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales = std::nullopt);
Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);

/// Linear interpolation between the two nearest inputs. With align_corners the corner
/// samples of input and output coincide (scale (in - 1) / (out - 1)); without, pixel centres
/// are aligned (source = scale * (o + 0.5) - 0.5, clamped at 0).
Tensor upsample_linear1d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt,
                           std::optional<double> scales_w = std::nullopt);

/// Bicubic (Keys, A = -0.75) interpolation of (N, C, H, W) over 4 x 4 neighbours, edge
/// indices clamped; sources placed as in upsample_bilinear2d (without the clamp at 0).
Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);

/// The 3-d forms over (N, C, D, H, W): nearest and trilinear, output_size {D, H, W}.
Tensor upsample_nearest3d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_d = std::nullopt,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_trilinear3d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d = std::nullopt,
                            std::optional<double> scales_h = std::nullopt,
                            std::optional<double> scales_w = std::nullopt);

}  // namespace ember
