// AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"): a
// head Linear over the shortlist classes plus one logit per cluster, and per cluster a
// two-Linear tail (in_features -> in_features / div_value^(i+1) -> cluster size), named as
// PyTorch's (head.weight, tail.0.0.weight, tail.0.1.weight, ...).
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/options/adaptive.h"

namespace ember {
namespace nn {

/// What AdaptiveLogSoftmaxWithLoss::forward returns, as libtorch's: output holds each
/// sample's log-probability of its target (differentiable), loss is -mean(output) as a
/// number (libtorch's double; train on `-out.output.mean()`).
struct ASMoutput {
  ASMoutput(Tensor output_, double loss_) : output(std::move(output_)), loss(loss_) {}
  Tensor output;
  double loss;
};

class AdaptiveLogSoftmaxWithLossImpl : public Cloneable<AdaptiveLogSoftmaxWithLossImpl> {
 public:
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(
            AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options_);

  /// input (N, in_features) with target (N), or (in_features) with a 0-d target.
  ASMoutput forward(const Tensor& input, const Tensor& target);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// Log-probabilities of every class from the input and the head's output.
  Tensor _get_full_log_prob(const Tensor& input, const Tensor& head_output);
  /// (N, n_classes) log-probabilities (or (n_classes) for a 1-d input).
  Tensor log_prob(const Tensor& input);
  /// The most likely class of each row, as argmax(log_prob(input), 1) but computing the
  /// tails only for rows whose head argmax is a cluster.
  Tensor predict(const Tensor& input);

  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<int64_t> cutoffs;  // options' cutoffs followed by n_classes
  int64_t shortlist_size = 0;
  int64_t n_clusters = 0;
  int64_t head_size = 0;
  Linear head = nullptr;
  ModuleList tail;
};
EMBER_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace nn
}  // namespace ember
