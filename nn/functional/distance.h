// Functional distances (F::cosine_similarity, F::pairwise_distance) with libtorch's option
// structs, over core/ops/distance.h.
#pragma once

#include "ember/core/ops/distance.h"
#include "ember/core/tensor.h"
#include "ember/nn/options/distance.h"

namespace ember {
namespace nn {
namespace functional {

/// Cosine of the angle between x1 and x2 along options.dim().
inline Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                                const CosineSimilarityFuncOptions& options = {}) {
  return ember::cosine_similarity(x1, x2, options.dim(), options.eps());
}

/// The p-norm of x1 - x2 + eps over the last dim.
inline Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                                const PairwiseDistanceFuncOptions& options = {}) {
  return ember::pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
