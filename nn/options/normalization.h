// Options of LayerNorm, GroupNorm, LocalResponseNorm and CrossMapLRN2d and of F::layer_norm,
// F::group_norm, F::local_response_norm and F::normalize, as libtorch spells them: LayerNormOptions({4}).eps(1e-6), F::NormalizeFuncOptions().dim(1).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// LayerNorm(normalized_shape).eps(1e-5).elementwise_affine(true).
struct LayerNormOptions {
  /*implicit*/ LayerNormOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  /// The trailing input dims normalised over (and the shape of weight and bias).
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(double, eps) = 1e-5;
  /// Whether the layer has a learnable weight (ones) and bias (zeros).
  EMBER_ARG(bool, elementwise_affine) = true;
  /// Whether the affine part has a bias (PyTorch's LayerNorm(bias=...); weight only when false).
  EMBER_ARG(bool, bias) = true;
};

/// GroupNorm(num_groups, num_channels).eps(1e-5).affine(true).
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(int64_t, num_channels);
  EMBER_ARG(double, eps) = 1e-5;
  /// Whether the layer has a learnable per-channel weight (ones) and bias (zeros).
  EMBER_ARG(bool, affine) = true;
};

/// LocalResponseNorm(size).alpha(1e-4).beta(0.75).k(1): x / (k + alpha * mean of x^2 over
/// `size` neighbouring channels)^beta.
struct LocalResponseNormOptions {
  /*implicit*/ LocalResponseNormOptions(int64_t size) : size_(size) {}
  /// The number of neighbouring channels averaged.
  EMBER_ARG(int64_t, size);
  EMBER_ARG(double, alpha) = 1e-4;
  EMBER_ARG(double, beta) = 0.75;
  EMBER_ARG(double, k) = 1.;
};

/// CrossMapLRN2d(size).alpha(1e-4).beta(0.75).k(1): Lua Torch's SpatialCrossMapLRN (k is an
/// integer, as in libtorch).
struct CrossMapLRN2dOptions {
  CrossMapLRN2dOptions(int64_t size) : size_(size) {}
  EMBER_ARG(int64_t, size);
  EMBER_ARG(double, alpha) = 1e-4;
  EMBER_ARG(double, beta) = 0.75;
  EMBER_ARG(int64_t, k) = 1;
};

namespace functional {

/// F::local_response_norm(x, LocalResponseNormFuncOptions(2).alpha(1e-4).beta(0.75).k(1)).
using LocalResponseNormFuncOptions = LocalResponseNormOptions;

/// F::layer_norm(x, LayerNormFuncOptions({4}).weight(w).bias(b).eps(1e-5)).
struct LayerNormFuncOptions {
  /*implicit*/ LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(double, eps) = 1e-5;
};

/// F::group_norm(x, GroupNormFuncOptions(2).weight(w).bias(b).eps(1e-5)).
struct GroupNormFuncOptions {
  /*implicit*/ GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(double, eps) = 1e-5;
};

/// F::normalize(x, NormalizeFuncOptions().p(2).dim(1).eps(1e-12)): x / max(||x||_p, eps).
struct NormalizeFuncOptions {
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(int64_t, dim) = 1;
  EMBER_ARG(double, eps) = 1e-12;
  /// When set, the result is also written into this tensor (Python's out=).
  EMBER_ARG(std::optional<Tensor>, out) = std::nullopt;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
