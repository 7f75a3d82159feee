// Pooling layers (MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
// AdaptiveMaxPool1d/2d/3d, MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d, LPPool1d/2d): thin
// modules over F::, printing as Python's repr ("MaxPool2d(kernel_size=2, stride=2, padding=0,
// dilation=1, ceil_mode=False)").
#pragma once

#include <optional>
#include <ostream>
#include <tuple>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"
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

class MaxPool3dImpl : public Cloneable<MaxPool3dImpl> {
 public:
  explicit MaxPool3dImpl(const MaxPool3dOptions& options) : options(options) {}
  /// libtorch's shorthand: `MaxPool3d(2)` for `MaxPool3d(MaxPool3dOptions(2))`.
  explicit MaxPool3dImpl(ExpandingArray<3> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The output and the argmax indices (for MaxUnpool3d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  MaxPool3dOptions options;
};
EMBER_MODULE(MaxPool3d);

class AvgPool3dImpl : public Cloneable<AvgPool3dImpl> {
 public:
  explicit AvgPool3dImpl(const AvgPool3dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AvgPool3d(2)` for `AvgPool3d(AvgPool3dOptions(2))`.
  explicit AvgPool3dImpl(ExpandingArray<3> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  AvgPool3dOptions options;
};
EMBER_MODULE(AvgPool3d);

class AdaptiveAvgPool3dImpl : public Cloneable<AdaptiveAvgPool3dImpl> {
 public:
  explicit AdaptiveAvgPool3dImpl(const AdaptiveAvgPool3dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AdaptiveAvgPool3d(2)` for `AdaptiveAvgPool3d(AdaptiveAvgPool3dOptions(2))`.
  explicit AdaptiveAvgPool3dImpl(ExpandingArrayWithOptionalElem<3> output_size) : options(output_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  AdaptiveAvgPool3dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool3d);

class AdaptiveMaxPool1dImpl : public Cloneable<AdaptiveMaxPool1dImpl> {
 public:
  explicit AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AdaptiveMaxPool1d(2)` for `AdaptiveMaxPool1d(AdaptiveMaxPool1dOptions(2))`.
  explicit AdaptiveMaxPool1dImpl(ExpandingArray<1> output_size) : options(output_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The output and the argmax indices (for MaxUnpool1d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  AdaptiveMaxPool1dOptions options;
};
EMBER_MODULE(AdaptiveMaxPool1d);

class AdaptiveMaxPool3dImpl : public Cloneable<AdaptiveMaxPool3dImpl> {
 public:
  explicit AdaptiveMaxPool3dImpl(const AdaptiveMaxPool3dOptions& options) : options(options) {}
  /// libtorch's shorthand: `AdaptiveMaxPool3d(2)` for `AdaptiveMaxPool3d(AdaptiveMaxPool3dOptions(2))`.
  explicit AdaptiveMaxPool3dImpl(ExpandingArrayWithOptionalElem<3> output_size) : options(output_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The output and the argmax indices (for MaxUnpool3d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  AdaptiveMaxPool3dOptions options;
};
EMBER_MODULE(AdaptiveMaxPool3d);

/// What MaxUnpool1d/2d/3d share: forward(input, indices, output_size) scatters input into
/// zeros at the indices a MaxPoolNd's forward_with_indices returned.
template <size_t D, class Derived>
class MaxUnpoolImpl : public Cloneable<Derived> {
 public:
  explicit MaxUnpoolImpl(const MaxUnpoolOptions<D>& options_) : options(options_) {}
  /// libtorch's shorthand: `MaxUnpool2d(2)` for `MaxUnpool2d(MaxUnpool2dOptions(2))`.
  explicit MaxUnpoolImpl(ExpandingArray<D> kernel_size) : options(kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  /// output_size: the spatial size to restore (or with batch and channels); by default the
  /// size the pooling came from, (in - 1) * stride + kernel - 2 * padding.
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({2, ::ember::nn::AnyValue(std::optional<std::vector<int64_t>>())})
  MaxUnpoolOptions<D> options;
};

class MaxUnpool1dImpl : public MaxUnpoolImpl<1, MaxUnpool1dImpl> {
 public:
  using MaxUnpoolImpl<1, MaxUnpool1dImpl>::MaxUnpoolImpl;
};
EMBER_MODULE(MaxUnpool1d);

class MaxUnpool2dImpl : public MaxUnpoolImpl<2, MaxUnpool2dImpl> {
 public:
  using MaxUnpoolImpl<2, MaxUnpool2dImpl>::MaxUnpoolImpl;
};
EMBER_MODULE(MaxUnpool2d);

class MaxUnpool3dImpl : public MaxUnpoolImpl<3, MaxUnpool3dImpl> {
 public:
  using MaxUnpoolImpl<3, MaxUnpool3dImpl>::MaxUnpoolImpl;
};
EMBER_MODULE(MaxUnpool3d);

/// What FractionalMaxPool2d/3d share: options checked at construction (exactly one of
/// output_size and output_ratio, the ratio in (0, 1)), and the buffer "_random_samples"
/// (undefined unless the options fix it, in which case every forward uses the same windows).
template <size_t D, class Derived>
class FractionalMaxPoolImpl : public Cloneable<Derived> {
 public:
  explicit FractionalMaxPoolImpl(const FractionalMaxPoolOptions<D>& options_) : options(options_) { reset(); }
  /// libtorch's shorthand: `FractionalMaxPool2d(2)` for the options with that kernel size
  /// (which then still needs an output_size or output_ratio).
  explicit FractionalMaxPoolImpl(ExpandingArray<D> kernel_size)
      : FractionalMaxPoolImpl(FractionalMaxPoolOptions<D>(kernel_size)) {}
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The output and the argmax indices (for MaxUnpool2d/3d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  FractionalMaxPoolOptions<D> options;
  Tensor _random_samples;
};

class FractionalMaxPool2dImpl : public FractionalMaxPoolImpl<2, FractionalMaxPool2dImpl> {
 public:
  using FractionalMaxPoolImpl<2, FractionalMaxPool2dImpl>::FractionalMaxPoolImpl;
};
EMBER_MODULE(FractionalMaxPool2d);

class FractionalMaxPool3dImpl : public FractionalMaxPoolImpl<3, FractionalMaxPool3dImpl> {
 public:
  using FractionalMaxPoolImpl<3, FractionalMaxPool3dImpl>::FractionalMaxPoolImpl;
};
EMBER_MODULE(FractionalMaxPool3d);

/// What LPPool1d/2d share: F::lp_pool1d/2d with the module's options.
template <size_t D, class Derived>
class LPPoolImpl : public Cloneable<Derived> {
 public:
  explicit LPPoolImpl(const LPPoolOptions<D>& options_) : options(options_) {}
  LPPoolImpl(double norm_type, ExpandingArray<D> kernel_size) : options(norm_type, kernel_size) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  LPPoolOptions<D> options;
};

class LPPool1dImpl : public LPPoolImpl<1, LPPool1dImpl> {
 public:
  using LPPoolImpl<1, LPPool1dImpl>::LPPoolImpl;
};
EMBER_MODULE(LPPool1d);

class LPPool2dImpl : public LPPoolImpl<2, LPPool2dImpl> {
 public:
  using LPPoolImpl<2, LPPool2dImpl>::LPPoolImpl;
};
EMBER_MODULE(LPPool2d);

}  // namespace nn
}  // namespace ember
