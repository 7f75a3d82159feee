// Options of F::pad (libtorch's PadFuncOptions): the pads, last dimension first, the mode
// (constant, reflect, replicate, circular) and the constant mode's fill value.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {
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
