// Unary elementwise math: neg, abs, exp, log, sin, sqrt, erf, floor, round, isnan, ... Each
// op's struct in unary.cpp holds its formula (unary_math.h), CPU kernel and backward together.
// Activations and clamps are in activation.h.
#pragma once

#include <optional>

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
/// Inverse hyperbolic functions (torch.asinh/acosh/atanh; integer input computes in float32),
/// and their in-place forms on a floating tensor.
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor& asinh_(Tensor& x);
Tensor& acosh_(Tensor& x);
Tensor& atanh_(Tensor& x);
Tensor sigmoid(const Tensor& x);
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

Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);

}  // namespace ember
