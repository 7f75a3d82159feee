// Options of F::interpolate (libtorch's InterpolateFuncOptions): exactly one of size or
// scale_factor, the mode, and align_corners for the linear modes.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {
namespace functional {

struct InterpolateFuncOptions {
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear>;
  /// The output's spatial size, one value per spatial dim.
  EMBER_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  /// The multiplier of each spatial size; the output size is floor(input size * scale).
  EMBER_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  EMBER_ARG(mode_t, mode) = enumtype::kNearest();
  /// Linear modes only: align the corner samples of input and output (default false).
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
  /// Compute the sample positions from the output size instead of the given scale_factor.
  EMBER_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
