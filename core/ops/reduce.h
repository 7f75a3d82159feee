// Reductions over all elements, one dim, or several dims (keepdim as PyTorch): sum, mean,
// prod, max/min, amax/amin, argmax/argmin, var/std, norm, logsumexp, all/any; scans
// (cumsum, cumprod); sorting (sort, argsort, topk). Also sum_to_size, used to un-broadcast
// gradients.
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& x);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& x);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& x, bool unbiased = true);
Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor var(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim = false);
Tensor std(const Tensor& x, bool unbiased = true);
Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, std::optional<IntArrayRef> dim = std::nullopt,
                                    std::optional<Scalar> correction = std::nullopt, bool keepdim = false);
Tensor norm(const Tensor& x, const Scalar& p = 2);
Tensor norm(const Tensor& x, std::optional<Scalar> p, IntArrayRef dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

/// Sums `x` down to `size` (the inverse of broadcasting), as gradients of broadcast ops need.
Tensor sum_to_size(const Tensor& x, IntArrayRef size);

}  // namespace ember
