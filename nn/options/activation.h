// Options of the pointwise activation layers and functions (libtorch's
// torch/nn/options/activation.h, the ReLU/LeakyReLU/ELU/GELU part).
#pragma once

#include <string>

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// ReLU(ReLUOptions().inplace(true)).
struct ReLUOptions {
  /*implicit*/ ReLUOptions(bool inplace = false) : inplace_(inplace) {}
  EMBER_ARG(bool, inplace);
};

/// LeakyReLU(LeakyReLUOptions().negative_slope(0.2)).
struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 1e-2;
  EMBER_ARG(bool, inplace) = false;
};

/// ELU(ELUOptions().alpha(1.0)).
struct ELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};

/// GELU(GELUOptions().approximate("tanh")); "none" is the exact erf form.
struct GELUOptions {
  EMBER_ARG(std::string, approximate) = "none";
};

namespace functional {
using ReLUFuncOptions = ReLUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using GELUFuncOptions = GELUOptions;
}  // namespace functional

}  // namespace nn
}  // namespace ember
