// Pooling: max / average / adaptive pooling over the last one or two dimensions of
// (C, H, W) or (N, C, H, W) tensors (and (C, L) / (N, C, L) for the 1-d forms), with
// PyTorch's output-size rules (ceil_mode, padding, dilation) and error texts.
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

/// PyTorch's pooling output length (Pool.h's pooling_output_shape): floor, or ceil with
/// the last window starting inside the input or its left padding.
int64_t pooling_output_shape(int64_t input_size, int64_t kernel_size, int64_t pad, int64_t stride,
                             int64_t dilation, bool ceil_mode);

}  // namespace ember
