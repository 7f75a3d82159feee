// F::pad (torch.nn.functional.pad) with libtorch's PadFuncOptions, over core/ops/padding.h.
#pragma once

#include <optional>
#include <string>

#include "ember/core/ops/padding.h"
#include "ember/nn/options/padding.h"

namespace ember {
namespace nn {
namespace functional {

/// Pads input by options.pad() (last dim first) in options.mode(); only constant mode takes
/// a fill value (a non-zero value with another mode is an error, as in libtorch).
inline Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  const std::string mode = enum_name(options.mode());
  std::optional<double> value;
  if (std::holds_alternative<enumtype::kConstant>(options.mode()) || options.value() != 0) value = options.value();
  return ember::pad(input, options.pad(), mode, value);
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
