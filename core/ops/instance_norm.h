// Instance normalization (ATen's instance_norm): each (sample, channel) plane of an (N, C, *)
// input normalised by its own statistics, as a batch norm over a (1, N * C, *) view.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// With use_input_stats, normalises every (n, c) plane by its mean and biased variance and,
/// when running_mean / running_var (C elements) are given, updates them in place with the
/// batch average of the per-instance statistics (running = (1 - momentum) running +
/// momentum stat, the variance unbiased). Without, normalises by the running statistics.
/// weight and bias (C elements) scale and shift each channel.
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool use_input_stats, double momentum,
                     double eps, bool cudnn_enabled = false);

}  // namespace ember
