// Loss layers (CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, HuberLoss, SmoothL1Loss, BCELoss,
// BCEWithLogitsLoss, KLDivLoss, the margin and embedding losses, PoissonNLLLoss, CTCLoss):
// forward through F::, class weights kept as buffers as libtorch does, printing as Python's
// repr ("CrossEntropyLoss()").
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/loss.h"

namespace ember {
namespace nn {

// A loss layer with no tensors of its own: options, forward and the repr.
#define EMBER_PLAIN_LOSS(Name)                                                      \
  class Name##Impl : public Cloneable<Name##Impl> {                                  \
   public:                                                                          \
    explicit Name##Impl(const Name##Options& options_ = {}) : options(options_) {}  \
    void reset() override {}                                                        \
    void pretty_print(std::ostream& stream) const override { stream << #Name "()"; } \
    Tensor forward(const Tensor& input, const Tensor& target);                      \
    Name##Options options;                                                          \
  };                                                                                \
  EMBER_MODULE(Name)

EMBER_PLAIN_LOSS(MSELoss);
EMBER_PLAIN_LOSS(L1Loss);
EMBER_PLAIN_LOSS(HuberLoss);
EMBER_PLAIN_LOSS(SmoothL1Loss);
EMBER_PLAIN_LOSS(KLDivLoss);
EMBER_PLAIN_LOSS(HingeEmbeddingLoss);
EMBER_PLAIN_LOSS(MultiLabelMarginLoss);
EMBER_PLAIN_LOSS(SoftMarginLoss);
EMBER_PLAIN_LOSS(PoissonNLLLoss);
#undef EMBER_PLAIN_LOSS

// A loss layer of three tensors (two inputs and a target, or anchor/positive/negative).
#define EMBER_TERNARY_LOSS(Name, A, B, C)                                            \
  class Name##Impl : public Cloneable<Name##Impl> {                                  \
   public:                                                                           \
    explicit Name##Impl(const Name##Options& options_ = {}) : options(options_) {}   \
    void reset() override {}                                                         \
    void pretty_print(std::ostream& stream) const override { stream << #Name "()"; } \
    Tensor forward(const Tensor& A, const Tensor& B, const Tensor& C);               \
    Name##Options options;                                                           \
  };                                                                                 \
  EMBER_MODULE(Name)

EMBER_TERNARY_LOSS(CosineEmbeddingLoss, input1, input2, target);
EMBER_TERNARY_LOSS(MarginRankingLoss, input1, input2, target);
EMBER_TERNARY_LOSS(TripletMarginLoss, anchor, positive, negative);
EMBER_TERNARY_LOSS(TripletMarginWithDistanceLoss, anchor, positive, negative);
#undef EMBER_TERNARY_LOSS

/// MultiMarginLoss(MultiMarginLossOptions().p(2).weight(w)); weight is a buffer.
class MultiMarginLossImpl : public Cloneable<MultiMarginLossImpl> {
 public:
  explicit MultiMarginLossImpl(const MultiMarginLossOptions& options_ = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const Tensor& target);
  MultiMarginLossOptions options;
  Tensor weight;
};
EMBER_MODULE(MultiMarginLoss);

/// MultiLabelSoftMarginLoss(MultiLabelSoftMarginLossOptions().weight(w)); weight is a buffer.
class MultiLabelSoftMarginLossImpl : public Cloneable<MultiLabelSoftMarginLossImpl> {
 public:
  explicit MultiLabelSoftMarginLossImpl(const MultiLabelSoftMarginLossOptions& options_ = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const Tensor& target);
  MultiLabelSoftMarginLossOptions options;
  Tensor weight;
};
EMBER_MODULE(MultiLabelSoftMarginLoss);

/// CTCLoss(CTCLossOptions().blank(0).zero_infinity(true)):
/// forward(log_probs (T, N, C), targets, input_lengths, target_lengths).
class CTCLossImpl : public Cloneable<CTCLossImpl> {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override { stream << "CTCLoss()"; }
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  CTCLossOptions options;
};
EMBER_MODULE(CTCLoss);

/// CrossEntropyLoss(CrossEntropyLossOptions().label_smoothing(0.1)); weight is a buffer.
class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options_ = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const Tensor& target);
  CrossEntropyLossOptions options;
  Tensor weight;
};
EMBER_MODULE(CrossEntropyLoss);

/// NLLLoss(NLLLossOptions().ignore_index(0)); weight is a buffer.
class NLLLossImpl : public Cloneable<NLLLossImpl> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options_ = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const Tensor& target);
  NLLLossOptions options;
  Tensor weight;
};
EMBER_MODULE(NLLLoss);

/// BCELoss(BCELossOptions().weight(w)); weight is a buffer.
class BCELossImpl : public Cloneable<BCELossImpl> {
 public:
  explicit BCELossImpl(const BCELossOptions& options_ = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const Tensor& target);
  BCELossOptions options;
};
EMBER_MODULE(BCELoss);

/// BCEWithLogitsLoss(BCEWithLogitsLossOptions().pos_weight(pw)); weight, pos_weight buffers.
class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_ = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input, const Tensor& target);
  BCEWithLogitsLossOptions options;
  Tensor weight, pos_weight;
};
EMBER_MODULE(BCEWithLogitsLoss);

}  // namespace nn
}  // namespace ember
