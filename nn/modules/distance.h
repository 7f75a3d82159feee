// Distance layers (CosineSimilarity, PairwiseDistance): forward(input1, input2) through F::,
// printing as Python's repr ("CosineSimilarity()").
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/distance.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/distance.h"

namespace ember {
namespace nn {

/// CosineSimilarity(CosineSimilarityOptions().dim(1).eps(1e-8)).
class CosineSimilarityImpl : public Cloneable<CosineSimilarityImpl> {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  CosineSimilarityOptions options;
};
EMBER_MODULE(CosineSimilarity);

/// PairwiseDistance(PairwiseDistanceOptions().p(1).keepdim(true)).
class PairwiseDistanceImpl : public Cloneable<PairwiseDistanceImpl> {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  PairwiseDistanceOptions options;
};
EMBER_MODULE(PairwiseDistance);

}  // namespace nn
}  // namespace ember
