// Vector norms over all elements or some dims (torch.norm): p = 0, 1, 2, inf, -inf or any
// other number (norm.cpp; terms in reduce_math.h).
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

Tensor norm(const Tensor& x, const Scalar& p = 2);
Tensor norm(const Tensor& x, std::optional<Scalar> p, IntArrayRef dim, bool keepdim = false);

}  // namespace ember
