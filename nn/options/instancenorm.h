// Options of InstanceNorm1d/2d/3d and of F::instance_norm, as libtorch spells them:
// InstanceNorm2dOptions(3).affine(true), F::InstanceNormFuncOptions().use_input_stats(false).
#pragma once

#include <cstdint>

#include "ember/core/arg.h"
#include "ember/core/tensor.h"

namespace ember {
namespace nn {

/// InstanceNorm{1,2,3}d(num_features).eps(1e-5).momentum(0.1).affine(false).track_running_stats(false).
struct InstanceNormOptions {
  /*implicit*/ InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}
  /// C of an (N, C, ...) input.
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  /// Weight of the newest batch in the running statistics.
  EMBER_ARG(double, momentum) = 0.1;
  /// Whether the layer has a learnable per-channel weight (ones) and bias (zeros).
  EMBER_ARG(bool, affine) = false;
  /// Whether the layer keeps running statistics and normalises by them in evaluation.
  EMBER_ARG(bool, track_running_stats) = false;
};

using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

namespace functional {

/// F::instance_norm(x, InstanceNormFuncOptions().running_mean(m).running_var(v).weight(w)).
struct InstanceNormFuncOptions {
  EMBER_ARG(Tensor, running_mean) = Tensor();
  EMBER_ARG(Tensor, running_var) = Tensor();
  EMBER_ARG(Tensor, weight) = Tensor();
  EMBER_ARG(Tensor, bias) = Tensor();
  /// Normalise by each instance's statistics (and update the running ones) rather than by
  /// the running statistics.
  EMBER_ARG(bool, use_input_stats) = true;
  EMBER_ARG(double, momentum) = 0.1;
  EMBER_ARG(double, eps) = 1e-5;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
