// Options of the padding layers (ReflectionPad2dOptions(1), ConstantPad1dOptions({1, 2}, 0.5))
// and of F::pad (libtorch's PadFuncOptions): the pads, last dimension first, the mode
// (constant, reflect, replicate, circular) and the constant mode's fill value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {

/// ReflectionPad{1,2,3}d(padding): 2 * D pads, last dim first; one number pads every side.
template <size_t D>
struct ReflectionPadOptions {
  /*implicit*/ ReflectionPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}
  EMBER_ARG(ExpandingArray<D * 2>, padding);
};
using ReflectionPad1dOptions = ReflectionPadOptions<1>;
using ReflectionPad2dOptions = ReflectionPadOptions<2>;
using ReflectionPad3dOptions = ReflectionPadOptions<3>;

/// ReplicationPad{1,2,3}d(padding), laid out as ReflectionPadOptions.
template <size_t D>
struct ReplicationPadOptions {
  /*implicit*/ ReplicationPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}
  EMBER_ARG(ExpandingArray<D * 2>, padding);
};
using ReplicationPad1dOptions = ReplicationPadOptions<1>;
using ReplicationPad2dOptions = ReplicationPadOptions<2>;
using ReplicationPad3dOptions = ReplicationPadOptions<3>;

/// ZeroPad2d(padding): {left, right, top, bottom} filled with zeros.
struct ZeroPad2dOptions {
  /*implicit*/ ZeroPad2dOptions(ExpandingArray<4> padding) : padding_(padding) {}
  EMBER_ARG(ExpandingArray<4>, padding);
};

/// ConstantPad{1,2,3}d(padding, value): the pads filled with value.
template <size_t D>
struct ConstantPadOptions {
  ConstantPadOptions(ExpandingArray<D * 2> padding, double value) : padding_(padding), value_(value) {}
  EMBER_ARG(ExpandingArray<D * 2>, padding);
  EMBER_ARG(double, value);
};
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;

namespace functional {

struct PadFuncOptions {
  using mode_t = std::variant<enumtype::kConstant, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
  /*implicit*/ PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  /// {left, right} for the last dim, then {top, bottom} for the one before, ...
  EMBER_ARG(std::vector<int64_t>, pad);
  EMBER_ARG(mode_t, mode) = enumtype::kConstant();
  /// The fill value of constant padding.
  EMBER_ARG(double, value) = 0;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
