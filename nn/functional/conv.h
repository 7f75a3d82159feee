// F::conv1d, F::conv2d, F::conv3d, F::conv_transpose1d, F::conv_transpose2d,
// F::conv_transpose3d (libtorch's torch/nn/functional/conv.h) over the core ops in
// core/ops/conv.h.
#pragma once

#include <string_view>
#include <variant>

#include "ember/core/ops/conv.h"
#include "ember/nn/options/conv.h"

namespace ember {
namespace nn {
namespace functional {

namespace detail {
/// Calls conv1d/conv2d with the padding variant turned into numbers or "valid"/"same".
template <size_t D, class Conv>
Tensor conv_with_padding(const typename ConvFuncOptions<D>::padding_t& padding, Conv&& conv) {
  if (const auto* numbers = std::get_if<ExpandingArray<D>>(&padding)) return conv(IntArrayRef(*numbers));
  return conv(std::string_view(std::holds_alternative<enumtype::kSame>(padding) ? "same" : "valid"));
}
}  // namespace detail

/// 1-d convolution of input (N, C, L) or (C, L) with weight (O, C / groups, K).
inline Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options = {}) {
  return detail::conv_with_padding<1>(options.padding(), [&](auto padding) {
    return ember::conv1d(input, weight, options.bias(), options.stride(), padding, options.dilation(),
                         options.groups());
  });
}

/// 2-d convolution of input (N, C, H, W) or (C, H, W) with weight (O, C / groups, KH, KW).
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options = {}) {
  return detail::conv_with_padding<2>(options.padding(), [&](auto padding) {
    return ember::conv2d(input, weight, options.bias(), options.stride(), padding, options.dilation(),
                         options.groups());
  });
}

/// 3-d convolution of input (N, C, D, H, W) or (C, D, H, W) with weight (O, C / groups, KD, KH, KW).
inline Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options = {}) {
  return detail::conv_with_padding<3>(options.padding(), [&](auto padding) {
    return ember::conv3d(input, weight, options.bias(), options.stride(), padding, options.dilation(),
                         options.groups());
  });
}

/// Transposed 1-d convolution with weight (C, O / groups, K).
inline Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                               const ConvTranspose1dFuncOptions& options = {}) {
  return ember::conv_transpose1d(input, weight, options.bias(), options.stride(), options.padding(),
                                 options.output_padding(), options.groups(), options.dilation());
}

/// Transposed 2-d convolution with weight (C, O / groups, KH, KW).
inline Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                               const ConvTranspose2dFuncOptions& options = {}) {
  return ember::conv_transpose2d(input, weight, options.bias(), options.stride(), options.padding(),
                                 options.output_padding(), options.groups(), options.dilation());
}

/// Transposed 3-d convolution with weight (C, O / groups, KD, KH, KW).
inline Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                               const ConvTranspose3dFuncOptions& options = {}) {
  return ember::conv_transpose3d(input, weight, options.bias(), options.stride(), options.padding(),
                                 options.output_padding(), options.groups(), options.dilation());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
