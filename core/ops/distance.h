// Pairwise p-norm distances between rows: cdist (every row of x1 against every row of x2,
// batched) and pdist (every pair of rows of one matrix), torch.cdist / torch.pdist.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// x1 (B..., P, M) and x2 (B..., R, M), batch dims broadcast: (B..., P, R) with entry (i, j)
/// the p-norm of x1[i] - x2[j]; p >= 0 (0 counts differing coordinates, inf is the largest
/// difference). compute_mode is accepted for PyTorch's signature; ember always takes the
/// differences directly (PyTorch's matmul form for large p = 2 inputs trades accuracy for speed).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);
/// x (N, M): the N (N - 1) / 2 distances ||x[i] - x[j]||_p for i < j, in row-major order of
/// (i, j), as the upper triangle of cdist(x, x) read row by row.
Tensor pdist(const Tensor& x, double p = 2.0);

}  // namespace ember
