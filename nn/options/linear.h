// Options of the linear-family layers (libtorch's torch/nn/options/linear.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// Linear(in_features, out_features).bias(true).
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

/// LazyLinear(out_features).bias(true): in_features comes from the first input.
struct LazyLinearOptions {
  /*implicit*/ LazyLinearOptions(int64_t out_features) : out_features_(out_features) {}
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

/// Bilinear(in1_features, in2_features, out_features).bias(true).
struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in1_features);
  EMBER_ARG(int64_t, in2_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

/// Flatten().start_dim(1).end_dim(-1).
struct FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};

/// Unflatten(dim, sizes): dim `dim` becomes the dims `sizes`.
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::vector<int64_t>, sizes);
};

}  // namespace nn
}  // namespace ember
