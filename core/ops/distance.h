// Distances between paired rows (torch.cosine_similarity, torch.pairwise_distance): composites
// of differentiable ops, as PyTorch's Distance.cpp defines them.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) over dim, after broadcasting x1 with x2.
/// The clamp is value-only: the gradient flows through the unclamped norms, as PyTorch's.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
/// The p-norm of x1 - x2 + eps over the last dim (of the broadcast shape).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);

}  // namespace ember
