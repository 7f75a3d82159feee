// Functional losses (F::cross_entropy, F::nll_loss, F::mse_loss, F::ctc_loss, the margin
// losses, ...) with libtorch's option structs, over core/ops/loss.h, margin_loss.h and
// ctc_loss.h. kl_div's kBatchMean (sum / batch size) and triplet_margin_with_distance_loss
// (any distance function) are handled here, as in PyTorch's functional.
#pragma once

#include <optional>

#include "ember/core/ops/binary.h"
#include "ember/core/ops/ctc_loss.h"
#include "ember/core/ops/distance.h"
#include "ember/core/ops/loss.h"
#include "ember/core/ops/margin_loss.h"
#include "ember/core/tensor.h"
#include "ember/nn/options/loss.h"

namespace ember {
namespace nn {
namespace functional {

namespace detail {
inline std::optional<Tensor> optional_tensor(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}
}  // namespace detail

/// log_softmax + nll_loss for class indices, or soft cross entropy for probability targets.
inline Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {}) {
  return ember::cross_entropy_loss(input, target, detail::optional_tensor(options.weight()),
                                   reduction_enum(options.reduction()), options.ignore_index(),
                                   options.label_smoothing());
}

/// -weight[t] * input[n, t] (input holds log-probabilities).
inline Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {}) {
  return ember::nll_loss(input, target, detail::optional_tensor(options.weight()),
                         reduction_enum(options.reduction()), options.ignore_index());
}

inline Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {}) {
  return ember::mse_loss(input, target, reduction_enum(options.reduction()));
}

inline Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {}) {
  return ember::l1_loss(input, target, reduction_enum(options.reduction()));
}

inline Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {}) {
  return ember::huber_loss(input, target, reduction_enum(options.reduction()), options.delta());
}

inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {}) {
  return ember::smooth_l1_loss(input, target, reduction_enum(options.reduction()), options.beta());
}

/// Binary cross entropy of probabilities; target must have input's size.
inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                   const BinaryCrossEntropyFuncOptions& options = {}) {
  return ember::binary_cross_entropy(input, target, detail::optional_tensor(options.weight()),
                                     reduction_enum(options.reduction()));
}

/// Binary cross entropy of sigmoid(input), computed stably; pos_weight weighs positives.
inline Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               const BinaryCrossEntropyWithLogitsFuncOptions& options = {}) {
  return ember::binary_cross_entropy_with_logits(input, target, detail::optional_tensor(options.weight()),
                                                 detail::optional_tensor(options.pos_weight()),
                                                 reduction_enum(options.reduction()));
}

/// KL divergence; kBatchMean divides the sum by the batch size (input.size(0)), kMean by
/// the number of elements (what PyTorch warns is not the mathematical KL mean).
inline Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {}) {
  const auto& r = options.reduction();
  if (std::holds_alternative<enumtype::kBatchMean>(r)) {
    Tensor sum = ember::kl_div(input, target, Reduction::Sum, options.log_target());
    return input.dim() == 0 ? sum : sum / input.size(0);
  }
  int64_t code = std::holds_alternative<enumtype::kNone>(r)  ? Reduction::None
                 : std::holds_alternative<enumtype::kSum>(r) ? Reduction::Sum
                                                             : Reduction::Mean;
  return ember::kl_div(input, target, code, options.log_target());
}

/// x where target is 1, max(0, margin - x) where it is -1.
inline Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                                   const HingeEmbeddingLossFuncOptions& options = {}) {
  return ember::hinge_embedding_loss(input, target, options.margin(), reduction_enum(options.reduction()));
}

/// Multi-class hinge loss: sum over i != y of weight[y] max(0, margin - x[y] + x[i])^p / C.
inline Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                                const MultiMarginLossFuncOptions& options = {}) {
  return ember::multi_margin_loss(input, target, options.p(), options.margin(),
                                  detail::optional_tensor(options.weight()),
                                  reduction_enum(options.reduction()));
}

/// 1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.
inline Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                                    const CosineEmbeddingLossFuncOptions& options = {}) {
  return ember::cosine_embedding_loss(input1, input2, target, options.margin(),
                                      reduction_enum(options.reduction()));
}

/// Multi-class multi-label hinge loss; target holds class indices ended by -1.
inline Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                                     const MultilabelMarginLossFuncOptions& options = {}) {
  return ember::multilabel_margin_loss(input, target, reduction_enum(options.reduction()));
}

/// log(1 + exp(-target * input)).
inline Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                               const SoftMarginLossFuncOptions& options = {}) {
  return ember::soft_margin_loss(input, target, reduction_enum(options.reduction()));
}

/// Per-class binary cross entropy of sigmoid(input), averaged over the classes.
inline Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                          const MultilabelSoftMarginLossFuncOptions& options = {}) {
  return ember::multilabel_soft_margin_loss(input, target, detail::optional_tensor(options.weight()),
                                            reduction_enum(options.reduction()));
}

/// max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance.
inline Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                  const TripletMarginLossFuncOptions& options = {}) {
  return ember::triplet_margin_loss(anchor, positive, negative, options.margin(), options.p(), options.eps(),
                                    options.swap(), reduction_enum(options.reduction()));
}

/// triplet_margin_loss with any distance function (pairwise_distance when none is given);
/// margin must be positive.
inline Tensor triplet_margin_with_distance_loss(
    const Tensor& anchor, const Tensor& positive, const Tensor& negative,
    const TripletMarginWithDistanceLossFuncOptions& options = {}) {
  EMBER_CHECK(options.margin() > 0, "margin must be greater than 0, got ", options.margin());
  ember::detail::check_triplet_dims(anchor, positive, negative);
  auto distance = [&](const Tensor& a, const Tensor& b) {
    return options.distance_function() ? (*options.distance_function())(a, b)
                                       : ember::pairwise_distance(a, b);
  };
  Tensor dist_pos = distance(anchor, positive);
  Tensor dist_neg = distance(anchor, negative);
  if (options.swap()) dist_neg = ember::minimum(dist_neg, distance(positive, negative));
  return ember::detail::apply_loss_reduction((options.margin() + dist_pos - dist_neg).clamp_min(0),
                                             reduction_enum(options.reduction()));
}

/// Connectionist Temporal Classification loss of log_probs (T, N, C) against padded (N, S) or
/// concatenated targets; lengths as integer tensors.
inline Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, const CTCLossFuncOptions& options = {}) {
  return ember::ctc_loss(log_probs, targets, input_lengths, target_lengths, options.blank(),
                         reduction_enum(options.reduction()), options.zero_infinity());
}

/// Poisson negative log likelihood: exp(x) - t x (log_input) or x - t log(x + eps).
inline Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                               const PoissonNLLLossFuncOptions& options = {}) {
  return ember::poisson_nll_loss(input, target, options.log_input(), options.full(), options.eps(),
                                 reduction_enum(options.reduction()));
}

/// max(0, -target * (input1 - input2) + margin).
inline Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                                  const MarginRankingLossFuncOptions& options = {}) {
  return ember::margin_ranking_loss(input1, input2, target, options.margin(),
                                    reduction_enum(options.reduction()));
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
