// Pooling layers (MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool2d): thin
// modules over F::, printing as Python's repr ("MaxPool2d(kernel_size=2, stride=2, padding=0,
// dilation=1, ceil_mode=False)").
#pragma once

#include <ostream>
#include <tuple>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/pooling.h"

namespace ember {
namespace nn {

class MaxPool1dImpl : public Cloneable<MaxPool1dImpl> {
 public:
  explicit MaxPool1dImpl(const MaxPool1dOptions& options) : options(options) {}
  /// libtorch's shorthand: `MaxPool1d(2)` for `MaxPool1d(MaxPool1dOptions(2))`.
  explicit MaxPool1dImpl(ExpandingArray<1> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The output and the argmax indices (for MaxUnpool1d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  MaxPool1dOptions options;
};
EMBER_MODULE(MaxPool1d);

class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : options(options) {}
  /// libtorch's shorthand: `MaxPool2d(2)` for `MaxPool2d(MaxPool2dOptions(2))`.
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  MaxPool2dOptions options;
};
EMBER_MODULE(MaxPool2d);

class AvgPool1dImpl : public Cloneable<AvgPool1dImpl> {
 public:
  explicit AvgPool1dImpl(const AvgPool1dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AvgPool1d(2)` for `AvgPool1d(AvgPool1dOptions(2))`.
  explicit AvgPool1dImpl(ExpandingArray<1> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  AvgPool1dOptions options;
};
EMBER_MODULE(AvgPool1d);

class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AvgPool2d(2)` for `AvgPool2d(AvgPool2dOptions(2))`.
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  AvgPool2dOptions options;
};
EMBER_MODULE(AvgPool2d);

class AdaptiveAvgPool1dImpl : public Cloneable<AdaptiveAvgPool1dImpl> {
 public:
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AdaptiveAvgPool1d(2)` for `AdaptiveAvgPool1d(AdaptiveAvgPool1dOptions(2))`.
  explicit AdaptiveAvgPool1dImpl(ExpandingArray<1> output_size) : options(output_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  AdaptiveAvgPool1dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool1d);

class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AdaptiveAvgPool2d(2)` for `AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions(2))`.
  explicit AdaptiveAvgPool2dImpl(ExpandingArrayWithOptionalElem<2> output_size) : options(output_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  AdaptiveAvgPool2dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool2d);

class AdaptiveMaxPool2dImpl : public Cloneable<AdaptiveMaxPool2dImpl> {
 public:
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AdaptiveMaxPool2d(2)` for `AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions(2))`.
  explicit AdaptiveMaxPool2dImpl(ExpandingArrayWithOptionalElem<2> output_size) : options(output_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  AdaptiveMaxPool2dOptions options;
};
EMBER_MODULE(AdaptiveMaxPool2d);

}  // namespace nn
}  // namespace ember
