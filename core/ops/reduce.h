// Reductions over all elements, one dim, or several dims (keepdim as PyTorch): sum, mean,
// prod, var/std, logsumexp, all/any; sum_to_size, which un-broadcasts gradients. The others
// have their own files: max/min/argmax (minmax.h), norm (norm.h), cumsum/cumprod (scan.h),
// sort/topk (sort.h).
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
Tensor var(const Tensor& x, bool unbiased = true);
Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor var(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim = false);
Tensor std(const Tensor& x, bool unbiased = true);
Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, std::optional<IntArrayRef> dim = std::nullopt,
                                    std::optional<Scalar> correction = std::nullopt, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);

/// Sums `x` down to `size` (the inverse of broadcasting), as gradients of broadcast ops need.
Tensor sum_to_size(const Tensor& x, IntArrayRef size);

}  // namespace ember
