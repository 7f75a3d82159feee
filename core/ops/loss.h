// Loss functions at ATen's level (reduction as an int enum, as at::Reduction): nll_loss and
// cross_entropy_loss (the trainer's hot path: nll_loss has a real gather kernel and a fused
// backward op), and the composites mse/l1/huber/smooth_l1/bce/bce_with_logits/kl_div.
#pragma once

#include <optional>
#include <string>

#include "ember/core/tensor.h"

namespace ember {

/// ATen's reduction codes (at::Reduction::Mean ...), passed as int64_t.
namespace Reduction {
enum Reduction : int64_t { None, Mean, Sum, END };
}  // namespace Reduction

/// Negative log likelihood of class-index targets: -weight[t] * input[n, t, ...].
/// input (C), (N, C) or (N, C, d1, ...); target (), (N) or (N, d1, ...) int64. Mean divides
/// by the summed weights of the non-ignored targets (NaN when all are ignored).
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
/// nll_loss for (N, C, d1, ...) inputs (ATen's nll_loss_nd); the same as nll_loss here.
Tensor nll_loss_nd(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                   int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
/// nll_loss(log_softmax(input, class dim), target) for class-index targets; for a target of
/// input's shape, class probabilities: -sum(target * log_softmax(input)) over the class dim.
/// label_smoothing mixes the targets with the uniform distribution, as PyTorch's formula.
Tensor cross_entropy_loss(const Tensor& input, const Tensor& target,
                          const std::optional<Tensor>& weight = std::nullopt, int64_t reduction = Reduction::Mean,
                          int64_t ignore_index = -100, double label_smoothing = 0.0);

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
/// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta); d = input - target.
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
                  double delta = 1.0);
/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (l1_loss for beta = 0).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
                      double beta = 1.0);
/// -(t log x + (1 - t) log(1 - x)) * weight, each log clamped at -100 as PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight = std::nullopt,
                            int64_t reduction = Reduction::Mean);
/// binary_cross_entropy(sigmoid(input), target) in the stable log-sum-exp form; pos_weight
/// scales the positive term (one value per class, broadcast over the last dim).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        int64_t reduction = Reduction::Mean);
/// Pointwise KL divergence target * (log target - input) (input holds log-probabilities;
/// log_target: target does too). batchmean lives in nn::functional::kl_div.
Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
              bool log_target = false);

namespace detail {
/// mean / sum / identity by reduction code.
Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction);
/// "torch.Size([2, 1])", as PyTorch's Python messages print sizes.
std::string torch_size_str(IntArrayRef sizes);
}  // namespace detail

}  // namespace ember
