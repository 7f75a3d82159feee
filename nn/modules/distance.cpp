// Distance modules: forward through F:: with the module's options; reprs as Python's.
#include "ember/nn/modules/distance.h"

namespace ember {
namespace nn {

void CosineSimilarityImpl::pretty_print(std::ostream& stream) const { stream << "CosineSimilarity()"; }
Tensor CosineSimilarityImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::cosine_similarity(input1, input2, options);
}

void PairwiseDistanceImpl::pretty_print(std::ostream& stream) const { stream << "PairwiseDistance()"; }
Tensor PairwiseDistanceImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::pairwise_distance(input1, input2, options);
}

}  // namespace nn
}  // namespace ember
