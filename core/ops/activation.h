// Activations and clamps: relu, gelu, silu, mish, elu, selu, celu, leaky_relu, rrelu, prelu,
// glu, softplus, log_sigmoid, hardtanh, relu6, threshold, hardshrink, softshrink, clamp/clip. Each op's struct in activation.cpp holds its formula (activation_math.h),
// CPU kernel, CUDA entry and backward together.
#pragma once

#include <optional>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

Tensor relu(const Tensor& x);
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor selu(const Tensor& x);
/// elu(x, alpha, 1, 1 / alpha); alpha must not be 0.
Tensor celu(const Tensor& x, const Scalar& alpha = 1.0);
/// leaky_relu with slope (lower + upper) / 2, or, when training, a slope drawn uniformly from
/// [lower, upper] for each element (ember's generator; manual_seed repeats it).
Tensor rrelu(const Tensor& x, const Scalar& lower = 1.0 / 8, const Scalar& upper = 1.0 / 3, bool training = false);
/// max(0, x) + weight * min(0, x); weight has one element or one per channel (x's dim 1).
Tensor prelu(const Tensor& x, const Tensor& weight);
/// first half * sigmoid(second half) of x split along dim (whose size must be even).
Tensor glu(const Tensor& x, int64_t dim = -1);
/// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor softplus(const Tensor& x, const Scalar& beta = 1, const Scalar& threshold = 20);
/// log(sigmoid(x)), computed without overflow.
Tensor log_sigmoid(const Tensor& x);
/// value where x <= threshold, else x.
Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value);
Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value);
/// 0 where -lambd <= x <= lambd, else x.
Tensor hardshrink(const Tensor& x, const Scalar& lambd = 0.5);
/// x - lambd above lambd, x + lambd below -lambd, else 0; lambd must be >= 0.
Tensor softshrink(const Tensor& x, const Scalar& lambd = 0.5);
Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor relu6(const Tensor& x);
Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor clip(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);

}  // namespace ember
