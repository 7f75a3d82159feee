// Unary elementwise ops and activations: exp, log, sin, relu, gelu, clamp, ... Each op's
// struct in unary.cpp holds its formula, CPU kernel and backward together.
#pragma once

#include <optional>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

Tensor neg(const Tensor& x);
Tensor negative(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor round(const Tensor& x, int64_t decimals);
Tensor trunc(const Tensor& x);
Tensor frac(const Tensor& x);
Tensor logical_not(const Tensor& x);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);

Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor selu(const Tensor& x);
/// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor softplus(const Tensor& x, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor relu6(const Tensor& x);

Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor clip(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);

}  // namespace ember
