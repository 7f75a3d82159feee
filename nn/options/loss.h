// Options of the loss layers and functions (libtorch's torch/nn/options/loss.h): reduction
// as a variant of kNone/kMean/kSum (KLDiv adds kBatchMean), class weights, ignore_index,
// label_smoothing, delta/beta, pos_weight, log_target. XxxFuncOptions alias XxxLossOptions.
#pragma once

#include <cstdint>
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
}  // namespace functional

}  // namespace nn
}  // namespace ember
