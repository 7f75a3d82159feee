// Options of the pooling layers and functions, as libtorch spells them: MaxPool2dOptions(2)
// .stride(1).padding(1); the functional forms take the same classes under their
// XxxFuncOptions names (F::max_pool2d(x, F::MaxPool2dFuncOptions(2))).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <vector>

#include "ember/core/arg.h"
#include "ember/core/tensor.h"

namespace ember {
namespace nn {

/// D output sizes where std::nullopt means "the input's size" (AdaptiveAvgPool2d({3, None})).
template <size_t D>
class ExpandingArrayWithOptionalElem : public ExpandingArray<D, std::optional<int64_t>> {
  using Base = ExpandingArray<D, std::optional<int64_t>>;

 public:
  /*implicit*/ ExpandingArrayWithOptionalElem(int64_t single) : Base(std::optional<int64_t>(single)) {}
  /*implicit*/ ExpandingArrayWithOptionalElem(std::initializer_list<std::optional<int64_t>> list)
      : Base(std::vector<std::optional<int64_t>>(list)) {}
  /*implicit*/ ExpandingArrayWithOptionalElem(const std::vector<int64_t>& list)
      : Base(std::vector<std::optional<int64_t>>(list.begin(), list.end())) {}
};

template <size_t D>
struct MaxPoolOptions {
  /*implicit*/ MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  /// The window size.
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  /// The window step; defaults to kernel_size.
  EMBER_ARG(ExpandingArray<D>, stride);
  /// Implicit -inf padding on both sides.
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  /// The spacing between window elements.
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  /// Ceil instead of floor when computing the output size.
  EMBER_ARG(bool, ceil_mode) = false;
};
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;

template <size_t D>
struct AvgPoolOptions {
  /*implicit*/ AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  /// Implicit zero padding on both sides.
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(bool, ceil_mode) = false;
  /// Whether padded zeros count in the average's divisor.
  EMBER_ARG(bool, count_include_pad) = true;
  /// A divisor used instead of the window size (2-d and 3-d only, as in PyTorch).
  EMBER_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;

template <class output_size_t>
struct AdaptiveAvgPoolOptions {
  /*implicit*/ AdaptiveAvgPoolOptions(output_size_t output_size) : output_size_(output_size) {}
  /// The output's spatial size.
  EMBER_ARG(output_size_t, output_size);
};
using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<ExpandingArray<1>>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptionalElem<2>>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptionalElem<3>>;

template <class output_size_t>
struct AdaptiveMaxPoolOptions {
  /*implicit*/ AdaptiveMaxPoolOptions(output_size_t output_size) : output_size_(output_size) {}
  EMBER_ARG(output_size_t, output_size);
};
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<ExpandingArray<1>>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptionalElem<2>>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptionalElem<3>>;

/// MaxUnpool2dOptions(kernel_size).stride(kernel_size).padding(0): the max pooling being
/// inverted.
template <size_t D>
struct MaxUnpoolOptions {
  /*implicit*/ MaxUnpoolOptions(ExpandingArray<D> kernel_size)
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  /// Defaults to kernel_size.
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

/// FractionalMaxPool2dOptions(kernel_size).output_size(n) or .output_ratio(r) (exactly one
/// of them); _random_samples fixes the windows (N, C, 2) or (N, C, 3), otherwise drawn
/// uniformly per call.
template <size_t D>
struct FractionalMaxPoolOptions {
  using ExpandingArrayDouble = ExpandingArray<D, double>;
  /*implicit*/ FractionalMaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(std::optional<ExpandingArray<D>>, output_size) = std::nullopt;
  /// The output size as a fraction of the input's, each in (0, 1).
  EMBER_ARG(std::optional<ExpandingArrayDouble>, output_ratio) = std::nullopt;
  EMBER_ARG(Tensor, _random_samples) = Tensor();
};
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

/// LPPool2dOptions(norm_type, kernel_size).stride(kernel_size).ceil_mode(false): the
/// norm_type-power average pooling.
template <size_t D>
struct LPPoolOptions {
  LPPoolOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(double, norm_type);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  /// Defaults to kernel_size.
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(bool, ceil_mode) = false;
};
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;

namespace functional {

/// F::max_unpool2d's options: MaxUnpoolOptions plus the output's size (spatial, or with
/// batch and channels), which defaults to the size the pooling came from.
template <size_t D>
struct MaxUnpoolFuncOptions {
  /*implicit*/ MaxUnpoolFuncOptions(ExpandingArray<D> kernel_size)
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;

using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;
}  // namespace functional

}  // namespace nn
}  // namespace ember
