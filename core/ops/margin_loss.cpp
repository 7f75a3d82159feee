// The margin, embedding and Poisson losses as PyTorch composes them (ATen/native/Loss.cpp,
// LossMultiMargin.cpp / LossMultiLabelMargin.cpp's formulas, torch.nn.functional): each is a
// chain of differentiable ops, so CUDA and autograd come from those ops. The two multi-class
// margin losses, which PyTorch runs as dedicated kernels, are written here as gathers and
// masked (N, K, C) sums with PyTorch's shape checks and messages.
#include "ember/core/ops/margin_loss.h"

#include <numbers>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/ops/activation.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/distance.h"
#include "ember/core/ops/embedding.h"
#include "ember/core/ops/scan.h"
#include "ember/core/ops/ternary.h"

namespace ember {
namespace {

void check_reduction(int64_t reduction) {
  EMBER_CHECK(reduction >= Reduction::None && reduction < Reduction::END, reduction,
              " is not a valid value for reduction");
}

/// The multi-class margin losses take a non-empty vector or matrix, or a 0-d input.
void check_vector_or_matrix(const Tensor& input) {
  int64_t nd = input.dim();
  EMBER_CHECK((nd == 2 && input.size(1) != 0) || (nd == 1 && input.size(0) != 0) || nd == 0,
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", input.sizes());
}

void check_long_target(const Tensor& target) {
  EMBER_CHECK(target.dtype() == kLong, "expected scalar type Long but found ",
              scalar_type_name(target.dtype()));
}

}  // namespace

namespace detail {
void check_triplet_dims(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  EMBER_CHECK(
      anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
      "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
      "but got: anchor ",
      anchor.dim(), "D, positive ", positive.dim(), "D, and negative ", negative.dim(), "D inputs");
}
}  // namespace detail

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             int64_t reduction) {
  // On PyTorch's float32 autocast lists (CPU and CUDA).
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &cosine_embedding_loss, input1, input2, target, margin,
                          reduction);
  check_reduction(reduction);
  int64_t td = target.dim();
  EMBER_CHECK(td == 1 || td == 0, "0D or 1D target tensor expected, multi-target not supported");
  if (td == 1) {
    EMBER_CHECK(input1.dim() == 2 && input2.dim() == 2,
                "1D target tensor expects 2D input tensors, but found inputs with sizes ", input1.sizes(),
                " and ", input2.sizes(), ".");
  } else {
    EMBER_CHECK(input1.dim() == 1 && input2.dim() == 1,
                "0D target tensor expects 1D input tensors, but found inputs with sizes ", input1.sizes(),
                " and ", input2.sizes(), ".");
  }
  constexpr double kEps = 1e-12;  // PyTorch's EPSILON: keeps the denominator off zero
  Tensor prod_sum = (input1 * input2).sum({td});
  Tensor mag1 = (input1 * input1).sum({td}) + kEps;
  Tensor mag2 = (input2 * input2).sum({td}) + kEps;
  Tensor cos = prod_sum / (mag1 * mag2).sqrt();
  Tensor zeros = zeros_like(cos);
  Tensor pos = 1 - cos;
  Tensor neg = (cos - margin).clamp_min(0);
  Tensor out = where(target.eq(1), pos, zeros) + where(target.eq(-1), neg, zeros);
  return detail::apply_loss_reduction(out, reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &hinge_embedding_loss, input, target, margin, reduction);
  check_reduction(reduction);
  Tensor zeros = zeros_like(input);
  Tensor margin_clamp = (margin - input).clamp_min(0);
  Tensor out = where(target.ne(1), margin_clamp, zeros) + where(target.ne(-1), input, zeros);
  return detail::apply_loss_reduction(out, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &margin_ranking_loss, input1, input2, target, margin,
                          reduction);
  check_reduction(reduction);
  EMBER_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(),
              "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: ",
              detail::torch_size_str(input1.sizes()), ", input2: ", detail::torch_size_str(input2.sizes()),
              ", target: ", detail::torch_size_str(target.sizes()), " ");
  Tensor out = (-target * (input1 - input2) + margin).clamp_min(0);
  return detail::apply_loss_reduction(out, reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &soft_margin_loss, input, target, reduction);
  check_reduction(reduction);
  return detail::apply_loss_reduction((-input * target).exp().log1p(), reduction);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &multilabel_margin_loss, input, target, reduction);
  check_reduction(reduction);
  check_vector_or_matrix(input);
  int64_t nd = input.dim();
  int64_t nframe = nd <= 1 ? 1 : input.size(0);
  int64_t dim = nd == 0 ? 1 : input.size(nd - 1);
  if (nd <= 1) {
    EMBER_CHECK(target.dim() <= 1 && target.numel() == dim, "inconsistent target size: ", target.sizes(),
                " for input of size: ", input.sizes());
  } else {
    EMBER_CHECK(target.dim() == 2 && target.size(0) == nframe && target.size(1) == dim,
                "inconsistent target size: ", target.sizes(), " for input of size: ", input.sizes());
  }
  check_long_target(target);
  Tensor t = target.detach().reshape({nframe, dim});
  Tensor valid, is_target, tc;
  {
    NoGradGuard no_grad;
    EMBER_CHECK(t.numel() == 0 || (t.min().item<int64_t>() >= -1 && t.max().item<int64_t>() < dim),
                "argument #2 'target' is out of range");
    // valid[n, k]: slot k comes before row n's first -1; is_target[n, c]: c is a valid slot's class.
    valid = cumsum(t.lt(0).to(kLong), 1).eq(0);
    tc = t.clamp_min(0);
    is_target = (one_hot(tc, dim) * valid.unsqueeze(2).to(kLong)).sum({1}).gt(0);
  }
  Tensor x = input.reshape({nframe, dim});
  Tensor xy = x.gather(1, tc);                                         // (N, K): x[y_k]
  Tensor hinge = (1 - xy.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0);  // (N, K, C)
  Tensor mask = logical_and(valid.unsqueeze(2), is_target.logical_not().unsqueeze(1)).to(input.dtype());
  Tensor loss = (hinge * mask).sum({1, 2}) / static_cast<double>(dim);
  if (target.dim() <= 1) loss = loss.reshape({});
  return detail::apply_loss_reduction(loss, reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const std::optional<Tensor>& weight, int64_t reduction) {
  check_reduction(reduction);
  // log sigmoid(x) = -softplus(-x), stable for either sign.
  Tensor loss = target * softplus(-input) + (1 - target) * softplus(input);
  if (weight && weight->defined()) loss = loss * *weight;
  if (input.dim() > 0) {
    int64_t class_dim = input.dim() - 1;
    loss = loss.sum({class_dim}) / static_cast<double>(input.size(class_dim));
  }
  return detail::apply_loss_reduction(loss, reduction);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p, double margin,
                         const std::optional<Tensor>& weight_opt, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &multi_margin_loss, input, target, p, margin, weight_opt,
                          reduction);
  check_reduction(reduction);
  EMBER_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  check_vector_or_matrix(input);
  int64_t nd = input.dim();
  int64_t nframe = nd <= 1 ? 1 : input.size(0);
  int64_t dim = nd == 0 ? 1 : input.size(nd - 1);
  EMBER_CHECK(target.dim() <= 1 && target.numel() == nframe, "inconsistent target size, expected ", nframe,
              " but got ", target.sizes());
  Tensor weight = weight_opt ? *weight_opt : Tensor();
  if (weight.defined()) {
    EMBER_CHECK(weight.dim() <= 1 && weight.numel() == dim, "inconsistent weight size, expected ", dim,
                " but got ", weight.sizes());
  }
  check_long_target(target);
  Tensor t = target.detach().reshape({nframe, 1});
  Tensor others;
  {
    NoGradGuard no_grad;
    EMBER_CHECK(t.numel() == 0 || (t.min().item<int64_t>() >= 0 && t.max().item<int64_t>() < dim),
                "target out of range");
    others = one_hot(t.reshape({nframe}), dim).eq(0).to(input.dtype());  // 0 at the target class
  }
  Tensor x = input.reshape({nframe, dim});
  Tensor z = (margin - x.gather(1, t) + x).clamp_min(0);
  if (p == 2) z = z * z;
  if (weight.defined())
    z = z * weight.reshape({dim}).index_select(0, t.reshape({nframe})).reshape({nframe, 1});
  Tensor loss = (z * others).sum({1}) / static_cast<double>(dim);
  if (target.dim() == 0) loss = loss.reshape({});
  return detail::apply_loss_reduction(loss, reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &poisson_nll_loss, input, target, log_input, full, eps,
                          reduction);
  check_reduction(reduction);
  Tensor loss = log_input ? input.exp() - target * input : input - target * (input + eps).log();
  if (full) {
    // Stirling's approximation of log(t!), for t > 1 only; t <= 1 reads a stand-in of 2 so
    // that neither the value nor the gradient of the masked-out term is NaN.
    Tensor big = target.gt(1);
    Tensor ts = where(big, target, full_like(target, 2.0));
    Tensor stirling = ts * ts.log() - ts + 0.5 * (2 * std::numbers::pi * ts).log();
    loss = loss + where(big, stirling, zeros_like(stirling));
  }
  return detail::apply_loss_reduction(loss, reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, int64_t reduction) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kFloat32Both, &triplet_margin_loss, anchor, positive, negative, margin, p,
                          eps, swap, reduction);
  check_reduction(reduction);
  detail::check_triplet_dims(anchor, positive, negative);
  Tensor dist_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor dist_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps));
  return detail::apply_loss_reduction((margin + dist_pos - dist_neg).clamp_min(0), reduction);
}

}  // namespace ember
