// Shape ops that copy: cat/stack/repeat/flip/roll/tril/triu (shape.cpp). Views, which share
// storage with their input, are in views.h.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor concat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
Tensor repeat(const Tensor& x, IntArrayRef repeats);
Tensor flip(const Tensor& x, IntArrayRef dims);
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

}  // namespace ember
