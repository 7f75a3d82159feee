// Options of AdaptiveLogSoftmaxWithLoss (libtorch's torch/nn/options/adaptive.h).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// AdaptiveLogSoftmaxWithLoss(AdaptiveLogSoftmaxWithLossOptions(64, 1000, {100, 500}).div_value(2)):
/// cutoffs split the classes into a shortlist and clusters, each cluster's projection being
/// in_features / div_value^(i + 1) wide.
struct AdaptiveLogSoftmaxWithLossOptions {
  /*implicit*/ AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes,
                                                 std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, n_classes);
  EMBER_ARG(std::vector<int64_t>, cutoffs);
  EMBER_ARG(double, div_value) = 4.;
  EMBER_ARG(bool, head_bias) = false;
};

}  // namespace nn
}  // namespace ember
