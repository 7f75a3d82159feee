// einsum: PyTorch's equation syntax (implicit and explicit output, ellipsis), contracted pair
// by pair through bmm (einsum.cpp).
#pragma once

#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

Tensor einsum(std::string_view equation, const TensorList& tensors);

}  // namespace ember
