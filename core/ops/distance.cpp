// cdist and pdist as norms of row differences (core/ops/norm.cpp gives the values, the special
// p cases and PyTorch's gradient conventions at zero distance). The differences take
// P * R * M elements: the direct form PyTorch also uses below 25 rows or for p != 2.
// One difference from PyTorch's _cdist_backward: at p = inf, rows tied for the largest
// difference share the gradient (norm's rule) where PyTorch gives each the full gradient.
#include "ember/core/ops/distance.h"

#include <cmath>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/norm.h"
#include "ember/core/ops/views.h"

namespace ember {

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  EMBER_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  EMBER_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  EMBER_CHECK(x1.is_floating_point(), "cdist only supports floating-point dtypes, X1 got: ",
              scalar_type_name(x1.dtype()));
  EMBER_CHECK(x2.is_floating_point(), "cdist only supports floating-point dtypes, X2 got: ",
              scalar_type_name(x2.dtype()));
  EMBER_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  EMBER_CHECK(p >= 0, "cdist only supports non-negative p values");
  EMBER_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2), "possible modes: None, 1, 2, but was: ",
              *compute_mode);
  Tensor diff = unsqueeze(x1, -2) - unsqueeze(x2, -3);  // (B..., P, R, M)
  return norm(diff, p, {-1}, /*keepdim=*/false);
}

Tensor pdist(const Tensor& x, double p) {
  EMBER_CHECK(x.dim() == 2, "pdist only supports 2D tensors, got: ", x.dim(), "D");
  EMBER_CHECK(x.is_floating_point(), "pdist only supports floating-point dtypes");
  EMBER_CHECK(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = x.size(0);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      rows.push_back(i);
      cols.push_back(j);
    }
  const auto index = [&](const std::vector<int64_t>& v) {
    return tensor(v, TensorOptions().dtype(kLong)).reshape({static_cast<int64_t>(v.size())}).to(x.device());
  };
  Tensor diff = index_select(x, 0, index(rows)) - index_select(x, 0, index(cols));  // (pairs, M)
  return norm(diff, p, {-1}, /*keepdim=*/false);
}

}  // namespace ember
