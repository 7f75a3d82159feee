// cosine_similarity and pairwise_distance as PyTorch composes them (ATen/native/Distance.cpp),
// so both get every device and autograd from the ops they use; cdist and pdist as norms of row
// differences (core/ops/norm.cpp gives the values, the special p cases and PyTorch's gradient
// conventions at zero distance). cdist's differences take P * R * M elements: the direct form
// PyTorch also uses below 25 rows or for p != 2. One difference from PyTorch's _cdist_backward:
// at p = inf, rows tied for the largest difference share the gradient (norm's rule) where
// PyTorch gives each the full gradient.
#include "ember/core/ops/distance.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/core/autocast.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/norm.h"
#include "ember/core/ops/views.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"

namespace ember {

Tensor cosine_similarity(const Tensor& x1_in, const Tensor& x2_in, int64_t dim, double eps) {
  // On PyTorch's CUDA float32 autocast list.
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32CudaOnly, &cosine_similarity, x1_in, x2_in, dim, eps);
  // An integral operand computes in the promoted floating type; two integral ones raise.
  ScalarType common = result_type(x1_in, x2_in);
  EMBER_CHECK(is_floating_point(common), "expected common dtype to be floating point, yet common dtype is ",
              scalar_type_name(common));
  TensorList b = broadcast_tensors({x1_in.to(common), x2_in.to(common)});
  const Tensor &x1 = b[0], &x2 = b[1];
  int64_t d = maybe_wrap_dim(dim, x1.dim());
  // Each operand is divided by its own norm first, which keeps the result in [-1, 1]. The
  // norms are clamped at eps in value only (PyTorch clamps a clone in place under no_grad):
  // n + (max(n, eps) - n).detach() has max(n, eps)'s value and n's gradient.
  auto clamped_norm = [&](const Tensor& x) {
    Tensor n = norm(x, Scalar(2), {d}, /*keepdim=*/true);
    return n + (n.detach().clamp_min(eps) - n.detach());
  };
  return ((x1 / clamped_norm(x1)) * (x2 / clamped_norm(x2))).sum({d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  int64_t out_dim = std::max(x1.dim(), x2.dim());
  int64_t innermost = out_dim == 0 ? 0 : out_dim - 1;
  Tensor diff = x1 - x2 + eps;
  if (out_dim == 0) return norm(diff, Scalar(p));
  return norm(diff, Scalar(p), {innermost}, keepdim);
}


Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  // On PyTorch's CUDA float32 autocast list, as pdist.
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32CudaOnly, &cdist, x1, x2, p, compute_mode);
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
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32CudaOnly, &pdist, x, p);
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
