// The padding layers (libtorch's torch/nn/modules/padding.h): ReflectionPad, ReplicationPad
// and ConstantPad in 1, 2 and 3 dims, and ZeroPad2d. Each forwards to F::pad in its mode and
// prints as PyTorch's repr.
#pragma once

#include <cstddef>
#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/padding.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/padding.h"

namespace ember {
namespace nn {

/// Mirror padding of the last D dims (no parameters).
template <size_t D, class Derived>
class ReflectionPadImpl : public Cloneable<Derived> {
 public:
  ReflectionPadImpl(ExpandingArray<D * 2> padding) : ReflectionPadImpl(ReflectionPadOptions<D>(padding)) {}
  explicit ReflectionPadImpl(const ReflectionPadOptions<D>& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  /// Python's repr: "ReflectionPad2d((1, 1, 2, 0))".
  void pretty_print(std::ostream& stream) const override;

  ReflectionPadOptions<D> options;
};

class ReflectionPad1dImpl : public ReflectionPadImpl<1, ReflectionPad1dImpl> {
 public:
  using ReflectionPadImpl<1, ReflectionPad1dImpl>::ReflectionPadImpl;
};
EMBER_MODULE(ReflectionPad1d);

class ReflectionPad2dImpl : public ReflectionPadImpl<2, ReflectionPad2dImpl> {
 public:
  using ReflectionPadImpl<2, ReflectionPad2dImpl>::ReflectionPadImpl;
};
EMBER_MODULE(ReflectionPad2d);

class ReflectionPad3dImpl : public ReflectionPadImpl<3, ReflectionPad3dImpl> {
 public:
  using ReflectionPadImpl<3, ReflectionPad3dImpl>::ReflectionPadImpl;
};
EMBER_MODULE(ReflectionPad3d);

/// Edge-repeating padding of the last D dims (no parameters).
template <size_t D, class Derived>
class ReplicationPadImpl : public Cloneable<Derived> {
 public:
  ReplicationPadImpl(ExpandingArray<D * 2> padding) : ReplicationPadImpl(ReplicationPadOptions<D>(padding)) {}
  explicit ReplicationPadImpl(const ReplicationPadOptions<D>& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  /// Python's repr: "ReplicationPad1d((1, 2))".
  void pretty_print(std::ostream& stream) const override;

  ReplicationPadOptions<D> options;
};

class ReplicationPad1dImpl : public ReplicationPadImpl<1, ReplicationPad1dImpl> {
 public:
  using ReplicationPadImpl<1, ReplicationPad1dImpl>::ReplicationPadImpl;
};
EMBER_MODULE(ReplicationPad1d);

class ReplicationPad2dImpl : public ReplicationPadImpl<2, ReplicationPad2dImpl> {
 public:
  using ReplicationPadImpl<2, ReplicationPad2dImpl>::ReplicationPadImpl;
};
EMBER_MODULE(ReplicationPad2d);

class ReplicationPad3dImpl : public ReplicationPadImpl<3, ReplicationPad3dImpl> {
 public:
  using ReplicationPadImpl<3, ReplicationPad3dImpl>::ReplicationPadImpl;
};
EMBER_MODULE(ReplicationPad3d);

/// Zero padding of the last two dims.
class ZeroPad2dImpl : public Cloneable<ZeroPad2dImpl> {
 public:
  ZeroPad2dImpl(ExpandingArray<4> padding) : ZeroPad2dImpl(ZeroPad2dOptions(padding)) {}
  explicit ZeroPad2dImpl(const ZeroPad2dOptions& options_) : options(options_) {}
  void reset() override {}
  /// Python's repr: "ZeroPad2d((1, 0, 2, 0))".
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  ZeroPad2dOptions options;
};
EMBER_MODULE(ZeroPad2d);

/// Padding of the last D dims with a constant value.
template <size_t D, class Derived>
class ConstantPadImpl : public Cloneable<Derived> {
 public:
  ConstantPadImpl(ExpandingArray<D * 2> padding, double value)
      : ConstantPadImpl(ConstantPadOptions<D>(padding, value)) {}
  explicit ConstantPadImpl(const ConstantPadOptions<D>& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  /// Python's repr: "ConstantPad1d(padding=(2, 2), value=3.5)".
  void pretty_print(std::ostream& stream) const override;

  ConstantPadOptions<D> options;
};

class ConstantPad1dImpl : public ConstantPadImpl<1, ConstantPad1dImpl> {
 public:
  using ConstantPadImpl<1, ConstantPad1dImpl>::ConstantPadImpl;
};
EMBER_MODULE(ConstantPad1d);

class ConstantPad2dImpl : public ConstantPadImpl<2, ConstantPad2dImpl> {
 public:
  using ConstantPadImpl<2, ConstantPad2dImpl>::ConstantPadImpl;
};
EMBER_MODULE(ConstantPad2d);

class ConstantPad3dImpl : public ConstantPadImpl<3, ConstantPad3dImpl> {
 public:
  using ConstantPadImpl<3, ConstantPad3dImpl>::ConstantPadImpl;
};
EMBER_MODULE(ConstantPad3d);

extern template class ReflectionPadImpl<1, ReflectionPad1dImpl>;
extern template class ReflectionPadImpl<2, ReflectionPad2dImpl>;
extern template class ReflectionPadImpl<3, ReflectionPad3dImpl>;
extern template class ReplicationPadImpl<1, ReplicationPad1dImpl>;
extern template class ReplicationPadImpl<2, ReplicationPad2dImpl>;
extern template class ReplicationPadImpl<3, ReplicationPad3dImpl>;
extern template class ConstantPadImpl<1, ConstantPad1dImpl>;
extern template class ConstantPadImpl<2, ConstantPad2dImpl>;
extern template class ConstantPadImpl<3, ConstantPad3dImpl>;

}  // namespace nn
}  // namespace ember
