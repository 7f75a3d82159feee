// Convolution layers: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
// ConvTranspose3d (libtorch's
// torch/nn/modules/conv.h) and LazyConv2d (Python's), with PyTorch's default initialisation
// and Python-style printing ("Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))").
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"
#include "ember/nn/options/conv.h"

namespace ember {
namespace nn {

/// What Conv1d, Conv2d and Conv3d share: weight (out, in / groups, *kernel) ~ kaiming_uniform(a=sqrt(5)),
/// bias (out) ~ U(±1/sqrt(fan_in)); a padding_mode other than zeros pads through F::pad.
template <size_t D, class Derived>
class ConvNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvNdImpl(ConvOptions<D> options_) : options(std::move(options_)) {}
  void reset() override;
  /// Re-draws weight and bias with PyTorch's default initialisation.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;

 protected:
  /// F::conv1d/conv2d of input with this layer's parameters; a padding_mode other than zeros
  /// pads the input through F::pad first and the convolution itself pads nothing.
  Tensor conv_forward(const Tensor& input) const;
  /// F::pad's pads for padding_mode, last dimension first (Python's
  /// _reversed_padding_repeated_twice).
  std::vector<int64_t> reversed_padding_repeated_twice_;
};

/// 1-d convolution over (N, C, L) or (C, L).
class Conv1dImpl : public ConvNdImpl<1, Conv1dImpl> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(Conv1dOptions options);
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Conv1d);

/// 2-d convolution over (N, C, H, W) or (C, H, W).
class Conv2dImpl : public ConvNdImpl<2, Conv2dImpl> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(Conv2dOptions options);
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Conv2d);

/// 3-d convolution over (N, C, D, H, W) or (C, D, H, W).
class Conv3dImpl : public ConvNdImpl<3, Conv3dImpl> {
 public:
  Conv3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv3dImpl(Conv3dOptions options);
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Conv3d);

/// What ConvTranspose1d, ConvTranspose2d and ConvTranspose3d share: weight (in, out / groups, *kernel),
/// initialised as Conv's; only padding_mode zeros is supported (as in PyTorch).
template <size_t D, class Derived>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvTransposeNdImpl(ConvTransposeOptions<D> options_) : options(std::move(options_)) {}
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  ConvTransposeOptions<D> options;
  Tensor weight;
  Tensor bias;

 protected:
  /// The transposed convolution of input, with output_padding chosen to give output_size
  /// (spatial sizes, optionally preceded by batch and channels) when it is given.
  Tensor transposed_forward(const Tensor& input, const std::optional<IntArrayRef>& output_size);
};

/// Transposed 1-d convolution over (N, C, L) or (C, L).
class ConvTranspose1dImpl : public ConvTransposeNdImpl<1, ConvTranspose1dImpl> {
 public:
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose1dImpl(ConvTranspose1dOptions options);
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(std::optional<IntArrayRef>())})
};
EMBER_MODULE(ConvTranspose1d);

/// Transposed 2-d convolution over (N, C, H, W) or (C, H, W).
class ConvTranspose2dImpl : public ConvTransposeNdImpl<2, ConvTranspose2dImpl> {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(ConvTranspose2dOptions options);
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(std::optional<IntArrayRef>())})
};
EMBER_MODULE(ConvTranspose2d);

/// Transposed 3-d convolution over (N, C, D, H, W) or (C, D, H, W).
class ConvTranspose3dImpl : public ConvTransposeNdImpl<3, ConvTranspose3dImpl> {
 public:
  ConvTranspose3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose3dImpl(ConvTranspose3dOptions options);
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(std::optional<IntArrayRef>())})
};
EMBER_MODULE(ConvTranspose3d);

/// A Conv2d whose in_channels is taken from the first input: weight and bias stay undefined
/// (registered under their names) until the first forward creates and initialises them.
class LazyConv2dImpl : public Cloneable<LazyConv2dImpl> {
 public:
  LazyConv2dImpl(int64_t out_channels, ExpandingArray<2> kernel_size)
      : LazyConv2dImpl(LazyConv2dOptions(out_channels, kernel_size)) {}
  explicit LazyConv2dImpl(LazyConv2dOptions options);
  void reset() override;
  void reset_parameters();
  /// Whether weight is still waiting for the first input.
  bool has_uninitialized_params() const { return !weight.defined(); }
  /// Prints "LazyConv2d(0, ...)" before and "Conv2d(in, ...)" after initialisation, as
  /// PyTorch's module turns into a Conv2d.
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LazyConv2dOptions options;
  int64_t in_channels = 0;
  Tensor weight;
  Tensor bias;

 private:
  /// The Conv2dOptions this module is equivalent to once in_channels is known.
  Conv2dOptions conv_options() const;
};
EMBER_MODULE(LazyConv2d);

}  // namespace nn
}  // namespace ember
