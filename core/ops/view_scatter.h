// Copies of a tensor with one of its views replaced: select_scatter, slice_scatter,
// diagonal_scatter (the functional forms of writing into a view, which exported programs use
// instead of in-place ops) and masked_scatter; and copy, the functional Tensor::copy_.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// A copy of `input` with input.select(dim, index) replaced by `src`, which must have that
/// view's shape. Differentiable in both: input's gradient is grad with the view zeroed, src's
/// is grad's view.
Tensor select_scatter(const Tensor& input, const Tensor& src, int64_t dim, int64_t index);
/// The same for input.slice(dim, start, end, step).
Tensor slice_scatter(const Tensor& input, const Tensor& src, int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
                     int64_t step = 1);
/// The same for input.diagonal(offset, dim1, dim2).
Tensor diagonal_scatter(const Tensor& input, const Tensor& src, int64_t offset = 0, int64_t dim1 = 0,
                        int64_t dim2 = 1);
/// `input` (broadcast with the bool `mask`) with the positions where mask is true filled, in
/// row-major order, by source's first elements; source must have at least that many.
Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source);
/// aten.copy: `src` in self's dtype and on self's device, broadcast to self's shape, as a new
/// tensor (what self.clone().copy_(src) holds). Differentiable in src.
Tensor copy(const Tensor& self, const Tensor& src, bool non_blocking = false);

}  // namespace ember
