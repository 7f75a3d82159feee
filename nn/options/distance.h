// Options of the distance layers and functions (libtorch's torch/nn/options/distance.h).
#pragma once

#include <cstdint>

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// CosineSimilarity(CosineSimilarityOptions().dim(1).eps(1e-8)).
struct CosineSimilarityOptions {
  EMBER_ARG(int64_t, dim) = 1;
  EMBER_ARG(double, eps) = 1e-8;
};

/// PairwiseDistance(PairwiseDistanceOptions().p(2).eps(1e-6).keepdim(false)).
struct PairwiseDistanceOptions {
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(bool, keepdim) = false;
};

namespace functional {
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
}  // namespace functional

}  // namespace nn
}  // namespace ember
