// Convolutions: conv1d, conv2d, conv3d (numeric or "same"/"valid" padding), conv_transpose1d,
// conv_transpose2d, conv_transpose3d and the general `convolution`, with ATen's signatures.
// All of them run through one op, "convolution" (node ConvolutionBackward0), whose CPU
// kernels are in core/cpu/conv.h; 3-d convolutions are composites of 2-d ones (conv.cpp).
#pragma once

#include <string>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

namespace detail {
/// A padding string ("same" or "valid") for the conv overloads. It accepts string literals,
/// std::string and std::string_view, but not a bare 0, so `conv2d(x, w, {}, 1, 0)` picks
/// the numeric overload instead of being ambiguous.
class PaddingString {
 public:
  template <size_t N>
  PaddingString(const char (&s)[N]) : s_(s, N - 1) {}  // NOLINT: implicit, like a string
  PaddingString(const std::string& s) : s_(s) {}       // NOLINT
  PaddingString(std::string_view s) : s_(s) {}         // NOLINT
  std::string_view view() const { return s_; }

 private:
  std::string_view s_;
};
}  // namespace detail

/// PyTorch's at::convolution: a convolution (or, with `transposed`, its adjoint) over 1, 2 or 3
/// spatial dimensions of a batched input (N, C, *), weight (O, C / groups, *) or, transposed,
/// (C, O / groups, *). stride/padding/dilation/output_padding hold one value or one per
/// spatial dimension.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);

/// 1-d convolution of input (N, C, L) or unbatched (C, L) with weight (O, C / groups, K).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
/// conv1d with padding "valid" (none) or "same" (output length = input length; stride 1).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              detail::PaddingString padding, IntArrayRef dilation = 1, int64_t groups = 1);

/// 2-d convolution of input (N, C, H, W) or unbatched (C, H, W) with weight
/// (O, C / groups, KH, KW).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
/// conv2d with padding "valid" (none) or "same" (output size = input size; stride 1). An
/// even total padding is split evenly; an odd one puts the extra row/column on the
/// bottom/right, as PyTorch does.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              detail::PaddingString padding, IntArrayRef dilation = 1, int64_t groups = 1);

/// 3-d convolution of input (N, C, D, H, W) or unbatched (C, D, H, W) with weight
/// (O, C / groups, KD, KH, KW).
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
/// conv3d with padding "valid" or "same" (as conv2d's).
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              detail::PaddingString padding, IntArrayRef dilation = 1, int64_t groups = 1);

/// Transposed 1-d convolution (the gradient of conv1d with respect to its input) of input
/// (N, C, L) or (C, L) with weight (C, O / groups, K).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

/// Transposed 2-d convolution of input (N, C, H, W) or (C, H, W) with weight
/// (C, O / groups, KH, KW).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

/// Transposed 3-d convolution of input (N, C, D, H, W) or (C, D, H, W) with weight
/// (C, O / groups, KD, KH, KW).
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

}  // namespace ember
