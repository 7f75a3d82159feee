// Views: view/reshape/flatten/squeeze/permute/transpose/expand/as_strided/narrow/slice/select/
// split/unfold/movedim/... share storage with their input (Note [Version counter]), as in
// PyTorch; reshape copies only when no view can express the result (views.cpp).
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

}  // namespace ember
