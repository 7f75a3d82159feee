// Options of the convolution layers and of F::conv* (libtorch's torch/nn/options/conv.h):
// ConvOptions<D> (Conv1dOptions, Conv2dOptions, Conv3dOptions), ConvTransposeOptions<D>, the functional
// ConvFuncOptions<D> / ConvTransposeFuncOptions<D>, and LazyConv2dOptions (Python's
// LazyConv2d, which libtorch lacks).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <variant>

#include "ember/core/tensor.h"
#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {

namespace detail {
/// How a Conv layer pads: zeros (inside the convolution) or through F::pad.
using conv_padding_mode_t = std::variant<enumtype::kZeros, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
/// Numeric padding per spatial dimension, or "valid" (none) / "same" (output size = input size).
template <size_t D>
using conv_padding_t = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
}  // namespace detail

/// Conv2dOptions(in_channels, out_channels, kernel_size).stride(1).padding(0).dilation(1)
/// .groups(1).bias(true).padding_mode(kZeros).
template <size_t D>
struct ConvOptions {
  using padding_mode_t = detail::conv_padding_mode_t;
  using padding_t = detail::conv_padding_t<D>;
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);

 public:
  /// `.padding({1, 2})`: one value per spatial dimension.
  ConvOptions& padding(std::initializer_list<int64_t> il) { return padding(padding_t(ExpandingArray<D>(il))); }
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(padding_mode_t, padding_mode) = enumtype::kZeros();
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

/// ConvTranspose2dOptions(in_channels, out_channels, kernel_size).stride(1).padding(0)
/// .output_padding(0).groups(1).bias(true).dilation(1).padding_mode(kZeros) (only zeros works).
template <size_t D>
struct ConvTransposeOptions {
  using padding_mode_t = detail::conv_padding_mode_t;
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(padding_mode_t, padding_mode) = enumtype::kZeros();
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

/// LazyConv2dOptions(out_channels, kernel_size): Conv2dOptions without in_channels, which
/// the first input supplies (Python's torch.nn.LazyConv2d).
struct LazyConv2dOptions {
  using padding_mode_t = detail::conv_padding_mode_t;
  using padding_t = detail::conv_padding_t<2>;
  LazyConv2dOptions(int64_t out_channels, ExpandingArray<2> kernel_size)
      : out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<2>(0);

 public:
  LazyConv2dOptions& padding(std::initializer_list<int64_t> il) { return padding(padding_t(ExpandingArray<2>(il))); }
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(padding_mode_t, padding_mode) = enumtype::kZeros();
};

namespace functional {

/// F::conv2d(x, w, Conv2dFuncOptions().bias(b).stride(1).padding(0).dilation(1).groups(1)).
template <size_t D>
struct ConvFuncOptions {
  using padding_t = nn::detail::conv_padding_t<D>;
  EMBER_ARG(Tensor, bias) = Tensor();
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);

 public:
  ConvFuncOptions& padding(std::initializer_list<int64_t> il) { return padding(padding_t(ExpandingArray<D>(il))); }
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

/// F::conv_transpose2d(x, w, ConvTranspose2dFuncOptions().bias(b).stride(1).padding(0)
/// .output_padding(0).groups(1).dilation(1)).
template <size_t D>
struct ConvTransposeFuncOptions {
  EMBER_ARG(Tensor, bias) = Tensor();
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

}  // namespace functional
}  // namespace nn
}  // namespace ember
