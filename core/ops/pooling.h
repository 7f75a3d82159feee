// Pooling: max / average / adaptive pooling over the last one or two dimensions of
// (C, H, W) or (N, C, H, W) tensors (and (C, L) / (N, C, L) for the 1-d forms), with
// PyTorch's output-size rules (ceil_mode, padding, dilation) and error texts; the 3-d forms,
// max unpooling and fractional max pooling are composites of those and of gather/scatter
// (pooling3d.cpp).
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// 2-d max pooling returning (values, indices); indices are flat positions h * W + w within
/// each input plane (int64), as PyTorch's.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);

/// 1-d max pooling of (C, L) or (N, C, L); indices are positions along L.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);

/// 2-d average pooling; count_include_pad counts padded positions in the divisor, and
/// divisor_override replaces the divisor altogether.
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true);

/// Adaptive pooling to a fixed output size: output o averages (or maxes) inputs
/// [floor(o I / O), ceil((o + 1) I / O)).
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size);

/// 3-d max pooling of (C, D, H, W) or (N, C, D, H, W) returning (values, indices); indices
/// are flat positions (d * H + h) * W + w within each input volume, as PyTorch's. Runs as a
/// 2-d max pooling over (H, W) followed by one over D.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);

/// 3-d average pooling (a 2-d one over (H, W), then one over D: the divisor is a product
/// of per-axis counts, so the two passes give PyTorch's result).
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

/// Adaptive 3-d pooling of (C, D, H, W) or (N, C, D, H, W); adaptive_max_pool3d's indices are
/// flat positions within each input volume.
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size);

/// The inverse of max pooling: a zero tensor of spatial size output_size with input's values
/// written at the flat positions `indices` (scatter), for (C, H, W) / (N, C, H, W) inputs.
Tensor max_unpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size);
/// max_unpool2d for (C, D, H, W) / (N, C, D, H, W); stride and padding are only checked (as
/// ATen's).
Tensor max_unpool3d(const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride,
                    IntArrayRef padding);

/// Fractional max pooling (Graham, 2014) with PyTorch's pseudo-random windows: plane (n, c)'s
/// windows start at the intervals drawn from random_samples[n, c] ((N, C, 2) for 2-d, whose
/// [0] is the width's sample and [1] the height's; (N, C, 3) for 3-d, ordered D, H, W).
/// Returns (values, flat indices within each input plane / volume).
std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples);
std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples);

/// PyTorch's pooling output length (Pool.h's pooling_output_shape): floor, or ceil with
/// the last window starting inside the input or its left padding.
int64_t pooling_output_shape(int64_t input_size, int64_t kernel_size, int64_t pad, int64_t stride,
                             int64_t dilation, bool ceil_mode);

}  // namespace ember
