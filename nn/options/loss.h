// Options of the loss layers and functions (libtorch's torch/nn/options/loss.h): reduction
// as a variant of kNone/kMean/kSum (KLDiv adds kBatchMean), class weights, ignore_index,
// label_smoothing, delta/beta, pos_weight, log_target; the margin losses' margin/p/swap,
// PoissonNLL's log_input/full/eps, CTC's blank/zero_infinity. XxxFuncOptions alias
// XxxLossOptions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <variant>

#include "ember/core/ops/loss.h"
#include "ember/core/tensor.h"
#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {

/// What a loss returns: per element, their mean, or their sum.
using loss_reduction_t = std::variant<enumtype::kNone, enumtype::kMean, enumtype::kSum>;

/// The ATen reduction code (ember::Reduction) of an options' reduction.
inline int64_t reduction_enum(const loss_reduction_t& r) {
  if (std::holds_alternative<enumtype::kNone>(r)) return Reduction::None;
  if (std::holds_alternative<enumtype::kSum>(r)) return Reduction::Sum;
  return Reduction::Mean;
}

// Options whose only argument is the reduction convert from kNone/kMean/kSum directly, so
// MSELoss(kSum) reads as in libtorch.
#define EMBER_REDUCTION_CTORS(Options)                                  \
  /*implicit*/ Options(enumtype::kNone r) : reduction_(r) {}            \
  /*implicit*/ Options(enumtype::kMean r) : reduction_(r) {}            \
  /*implicit*/ Options(enumtype::kSum r) : reduction_(r) {}             \
  Options() = default;

/// MSELoss(MSELossOptions(kSum)): (input - target)^2.
struct MSELossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_REDUCTION_CTORS(MSELossOptions)
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// L1Loss: |input - target|.
struct L1LossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_REDUCTION_CTORS(L1LossOptions)
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// HuberLoss(HuberLossOptions().delta(0.5)).
struct HuberLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_REDUCTION_CTORS(HuberLossOptions)
  EMBER_ARG(reduction_t, reduction) = kMean;
  EMBER_ARG(double, delta) = 1.0;
};

/// SmoothL1Loss(SmoothL1LossOptions().beta(0.5)); beta 0 is L1Loss.
struct SmoothL1LossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_REDUCTION_CTORS(SmoothL1LossOptions)
  EMBER_ARG(reduction_t, reduction) = kMean;
  EMBER_ARG(double, beta) = 1.0;
};

/// BCELoss(BCELossOptions().weight(w)): binary cross entropy of probabilities.
struct BCELossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// BCEWithLogitsLoss(BCEWithLogitsLossOptions().pos_weight(pw)): bce of sigmoid(input).
struct BCEWithLogitsLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(reduction_t, reduction) = kMean;
  EMBER_ARG(Tensor, pos_weight) = {};
};

/// NLLLoss(NLLLossOptions().ignore_index(0)): -weight[t] * input[n, t].
struct NLLLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// CrossEntropyLoss(CrossEntropyLossOptions().label_smoothing(0.1)).
struct CrossEntropyLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(reduction_t, reduction) = kMean;
  EMBER_ARG(double, label_smoothing) = 0.0;
};

/// KLDivLoss(KLDivLossOptions(kBatchMean).log_target(true)).
struct KLDivLossOptions {
  using reduction_t = std::variant<enumtype::kNone, enumtype::kBatchMean, enumtype::kSum, enumtype::kMean>;
  /*implicit*/ KLDivLossOptions(enumtype::kNone r) : reduction_(r) {}
  /*implicit*/ KLDivLossOptions(enumtype::kBatchMean r) : reduction_(r) {}
  /*implicit*/ KLDivLossOptions(enumtype::kSum r) : reduction_(r) {}
  /*implicit*/ KLDivLossOptions(enumtype::kMean r) : reduction_(r) {}
  KLDivLossOptions() = default;
  EMBER_ARG(reduction_t, reduction) = kMean;
  EMBER_ARG(bool, log_target) = false;
};

/// HingeEmbeddingLoss(HingeEmbeddingLossOptions().margin(2)).
struct HingeEmbeddingLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// MultiMarginLoss(MultiMarginLossOptions().p(2).margin(0.5).weight(w)); p is 1 or 2.
struct MultiMarginLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(int64_t, p) = 1;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(Tensor, weight) = Tensor();
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// CosineEmbeddingLoss(CosineEmbeddingLossOptions().margin(0.5)).
struct CosineEmbeddingLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(double, margin) = 0.0;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// MultiLabelMarginLoss(kSum).
struct MultiLabelMarginLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_REDUCTION_CTORS(MultiLabelMarginLossOptions)
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// SoftMarginLoss(kSum).
struct SoftMarginLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_REDUCTION_CTORS(SoftMarginLossOptions)
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// MultiLabelSoftMarginLoss(MultiLabelSoftMarginLossOptions().weight(w)).
struct MultiLabelSoftMarginLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(Tensor, weight) = Tensor();
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// TripletMarginLoss(TripletMarginLossOptions().margin(0.5).p(1).swap(true)).
struct TripletMarginLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(bool, swap) = false;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// TripletMarginWithDistanceLoss(TripletMarginWithDistanceLossOptions().distance_function(f));
/// no distance_function means pairwise_distance.
struct TripletMarginWithDistanceLossOptions {
  using reduction_t = loss_reduction_t;
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  EMBER_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(bool, swap) = false;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// CTCLoss(CTCLossOptions().blank(0).zero_infinity(true)).
struct CTCLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(int64_t, blank) = 0;
  EMBER_ARG(reduction_t, reduction) = kMean;
  EMBER_ARG(bool, zero_infinity) = false;
};

/// PoissonNLLLoss(PoissonNLLLossOptions().log_input(false).full(true)).
struct PoissonNLLLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(bool, log_input) = true;
  EMBER_ARG(bool, full) = false;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

/// MarginRankingLoss(MarginRankingLossOptions().margin(0.5)).
struct MarginRankingLossOptions {
  using reduction_t = loss_reduction_t;
  EMBER_ARG(double, margin) = 0;
  EMBER_ARG(reduction_t, reduction) = kMean;
};

#undef EMBER_REDUCTION_CTORS

namespace functional {
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using CTCLossFuncOptions = CTCLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
}  // namespace functional

}  // namespace nn
}  // namespace ember
