// softmax and log_softmax along one dim (max-subtracted, one pass per row), and the
// gradient functions their backward ops use (ATen's _softmax_backward_data names).
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// exp(x - max) / sum(exp(x - max)) along `dim`; `dtype` casts the input first.
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// x - max - log(sum(exp(x - max))) along `dim`; `dtype` casts the input first.
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

/// d softmax: y * (grad - sum(grad * y, dim)), y = softmax's output.
Tensor _softmax_backward_data(const Tensor& grad, const Tensor& output, int64_t dim);
/// d log_softmax: grad - exp(y) * sum(grad, dim), y = log_softmax's output.
Tensor _log_softmax_backward_data(const Tensor& grad, const Tensor& output, int64_t dim);

namespace detail {
/// Plain double-precision reference loops (test oracles for the fast kernels).
Tensor softmax_reference(const Tensor& x, int64_t dim, bool log);
}  // namespace detail

}  // namespace ember
