// Options of Upsample and of F::interpolate (libtorch's UpsampleOptions and
// InterpolateFuncOptions): exactly one of size or scale_factor, the mode, and align_corners
// for the interpolating modes.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {

/// Upsample().size({4, 5}) or .scale_factor({2.0, 2.0}), .mode(kBilinear).align_corners(true).
struct UpsampleOptions {
  /// The output's spatial size, one value per spatial dim.
  EMBER_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  /// The multiplier of each spatial size.
  EMBER_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  using mode_t =
      std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kBicubic, enumtype::kTrilinear>;
  EMBER_ARG(mode_t, mode) = enumtype::kNearest();
  /// Interpolating modes only: align the corner samples of input and output.
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

namespace functional {

struct InterpolateFuncOptions {
  using mode_t =
      std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kBicubic,
                   enumtype::kTrilinear, enumtype::kArea, enumtype::kNearestExact>;
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
