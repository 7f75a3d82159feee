// Copies: clone (a tensor with its own storage, differentiable) and contiguous (copy.cpp, which
// also holds Tensor::copy_, fill_, to, item and pinning).
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// A copy of `t` with its own storage (differentiable).
Tensor clone(const Tensor& t);
Tensor contiguous(const Tensor& x);

}  // namespace ember
