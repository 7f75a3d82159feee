// Options of the batch norm layers and of F::batch_norm, as libtorch spells them:
// BatchNorm2dOptions(32).momentum(0.01), F::BatchNormFuncOptions().weight(w).training(true).
#pragma once

#include <cstdint>
#include <optional>

#include "ember/core/tensor.h"
#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// BatchNorm{1,2,3}d(num_features).eps(1e-5).momentum(0.1).affine(true).track_running_stats(true).
struct BatchNormOptions {
  /*implicit*/ BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  /// C of an (N, C, ...) input.
  EMBER_ARG(int64_t, num_features);
  /// Added to the variance for numerical stability.
  EMBER_ARG(double, eps) = 1e-5;
  /// Weight of the newest batch in the running statistics; nullopt keeps a cumulative
  /// (equal-weight) average over all batches seen, counted by num_batches_tracked.
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  /// Whether the layer has a learnable weight (ones) and bias (zeros).
  EMBER_ARG(bool, affine) = true;
  /// Whether the layer keeps running statistics for evaluation; without them it normalises
  /// with batch statistics in evaluation too.
  EMBER_ARG(bool, track_running_stats) = true;
};

using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

namespace functional {

/// F::batch_norm(x, running_mean, running_var, BatchNormFuncOptions().weight(w).training(true)).
struct BatchNormFuncOptions {
  EMBER_ARG(Tensor, weight) = Tensor();
  EMBER_ARG(Tensor, bias) = Tensor();
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(double, eps) = 1e-5;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
