// Distances: between paired rows (torch.cosine_similarity, torch.pairwise_distance) and between
// all pairs of rows (torch.cdist for two sets, torch.pdist within one), composites of
// differentiable ops as PyTorch's Distance.cpp defines them.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) over dim, after broadcasting x1 with x2.
/// The clamp is value-only: the gradient flows through the unclamped norms, as PyTorch's.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
/// The p-norm of x1 - x2 + eps over the last dim (of the broadcast shape).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);


/// x1 (B..., P, M) and x2 (B..., R, M), batch dims broadcast: (B..., P, R) with entry (i, j)
/// the p-norm of x1[i] - x2[j]; p >= 0 (0 counts differing coordinates, inf is the largest
/// difference). compute_mode is accepted for PyTorch's signature; ember always takes the
/// differences directly (PyTorch's matmul form for large p = 2 inputs trades accuracy for speed).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);
/// x (N, M): the N (N - 1) / 2 distances ||x[i] - x[j]||_p for i < j, in row-major order of
/// (i, j), as the upper triangle of cdist(x, x) read row by row.
Tensor pdist(const Tensor& x, double p = 2.0);

}  // namespace ember
