// Functional losses (F::cross_entropy, F::nll_loss, F::mse_loss, ...) with libtorch's option
// structs, over core/ops/loss.h. kl_div's kBatchMean (sum / batch size) is handled here, as
// in PyTorch's functional.
#pragma once

#include <optional>

#include "ember/core/ops/binary.h"
#include "ember/core/ops/loss.h"
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

}  // namespace functional
}  // namespace nn
}  // namespace ember
