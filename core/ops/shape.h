// Shape ops and views: view/reshape/permute/transpose/expand/narrow/select/... share storage
// with their input (Note [Version counter]); cat/stack/repeat/flip/roll/tril/triu copy.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

Tensor view(const Tensor& x, IntArrayRef size);
Tensor reshape(const Tensor& x, IntArrayRef size);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor permute(const Tensor& x, IntArrayRef dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& x);
Tensor expand(const Tensor& x, IntArrayRef size);
Tensor broadcast_to(const Tensor& x, IntArrayRef size);
TensorList broadcast_tensors(const TensorList& tensors);
Tensor as_strided(const Tensor& x, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
TensorList split(const Tensor& x, int64_t split_size, int64_t dim = 0);
TensorList split(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
TensorList split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
TensorList unbind(const Tensor& x, int64_t dim = 0);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor unfold(const Tensor& x, int64_t dimension, int64_t size, int64_t step);
Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination);
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);
Tensor contiguous(const Tensor& x);

Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor concat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
Tensor repeat(const Tensor& x, IntArrayRef repeats);
Tensor flip(const Tensor& x, IntArrayRef dims);
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

}  // namespace ember
