// cosine_similarity and pairwise_distance as PyTorch composes them (ATen/native/Distance.cpp),
// so both get every device and autograd from the ops they use.
#include "ember/core/ops/distance.h"

#include <algorithm>

#include "ember/core/autocast.h"
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

}  // namespace ember
