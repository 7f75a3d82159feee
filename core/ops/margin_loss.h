// Margin, embedding and Poisson losses at ATen's level (reduction as Reduction::Mean ...):
// cosine/hinge embedding, margin ranking, soft margin, multilabel margin, multilabel soft
// margin, multi margin, poisson_nll and triplet margin. Each is PyTorch's own composite of
// differentiable ops (margin_loss.cpp), so every device and autograd come with them.
#pragma once

#include <optional>

#include "ember/core/ops/loss.h"
#include "ember/core/tensor.h"

namespace ember {

/// 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1; rows of
/// (N, D) inputs with an (N) target, or (D) inputs with a 0-d target.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, int64_t reduction = Reduction::Mean);
/// x where target is 1, max(0, margin - x) where it is -1 (both where target is neither).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            int64_t reduction = Reduction::Mean);
/// max(0, -target * (input1 - input2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, int64_t reduction = Reduction::Mean);
/// log(1 + exp(-target * input)).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
/// sum over target classes j and non-target classes i of max(0, 1 - (x[y_j] - x[i])) / C;
/// target (N, C) or (C) int64 holds the class indices, ended by the first -1.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
/// -(t log sigmoid(x) + (1 - t) log sigmoid(-x)) * weight, averaged over the class (last) dim.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const std::optional<Tensor>& weight = std::nullopt,
                                   int64_t reduction = Reduction::Mean);
/// sum over i != y of weight[y] * max(0, margin - x[y] + x[i])^p / C, p 1 or 2; input (N, C)
/// or (C), target (N) or () int64.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p = 1, double margin = 1.0,
                         const std::optional<Tensor>& weight = std::nullopt,
                         int64_t reduction = Reduction::Mean);
/// exp(x) - t x (log_input) or x - t log(x + eps); full adds Stirling's term for t > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true, bool full = false,
                        double eps = 1e-8, int64_t reduction = Reduction::Mean);
/// max(0, margin + d(a, p) - d(a, n)) with d = pairwise_distance(., ., p, eps); swap uses
/// min(d(a, n), d(p, n)) as the negative distance.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2, double eps = 1e-6, bool swap = false,
                           int64_t reduction = Reduction::Mean);

namespace detail {
/// The triplet losses' check that anchor, positive and negative have one number of dims.
void check_triplet_dims(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
}  // namespace detail

}  // namespace ember
