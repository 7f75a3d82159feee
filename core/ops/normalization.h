// Normalization layers' ops with ATen's signatures: batch_norm (updating running statistics
// in place while training), layer_norm and group_norm. Fused CPU kernels in
// core/cpu/normalization.cpp; backward fused too, composite under create_graph.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// Batch normalization over dim 1 of an (N, C, *) input. Training: normalises with the batch
/// mean and biased variance and, when running_mean / running_var are given, updates them in
/// place (running = (1 - momentum) running + momentum stat, the variance unbiased).
/// Evaluation: normalises with the running statistics.
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                  bool training, double momentum, double eps, bool cudnn_enabled = false);

/// Normalises over the last normalized_shape.size() dims, then applies weight and bias
/// (each of shape normalized_shape) elementwise.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-5, bool cudnn_enable = true);

/// Normalises each of num_groups groups of channels of an (N, C, *) input; weight and bias
/// have C elements.
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = {},
                  const std::optional<Tensor>& bias = {}, double eps = 1e-5, bool cudnn_enabled = true);

}  // namespace ember
