// Cumulative ops along a dim: cumsum, cumprod (scan.cpp).
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

}  // namespace ember
