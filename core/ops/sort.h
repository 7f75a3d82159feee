// Sorting along a dim: sort (stable, NaN last as PyTorch), argsort, topk (sort.cpp).
#pragma once

#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

}  // namespace ember
