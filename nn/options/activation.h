// Options of the pointwise activation layers and functions (libtorch's
// torch/nn/options/activation.h; the Softmax family's are in nn/options/softmax.h).
#pragma once

#include <cstdint>
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

/// SELU(SELUOptions().inplace(true)).
struct SELUOptions {
  /*implicit*/ SELUOptions(bool inplace = false) : inplace_(inplace) {}
  EMBER_ARG(bool, inplace);
};

/// CELU(CELUOptions().alpha(0.5)).
struct CELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};

/// GLU(GLUOptions(1)): the dim that is halved.
struct GLUOptions {
  /*implicit*/ GLUOptions(int64_t dim = -1) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};

/// Hardshrink(HardshrinkOptions().lambda(1.0)).
struct HardshrinkOptions {
  /*implicit*/ HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}
  EMBER_ARG(double, lambda);
};

/// Hardtanh(HardtanhOptions().min_val(-2).max_val(2)).
struct HardtanhOptions {
  EMBER_ARG(double, min_val) = -1.0;
  EMBER_ARG(double, max_val) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};

/// PReLU(PReLUOptions().num_parameters(3).init(0.1)): one slope, or one per channel.
struct PReLUOptions {
  EMBER_ARG(int64_t, num_parameters) = 1;
  EMBER_ARG(double, init) = 0.25;
};

/// ReLU6(ReLU6Options().inplace(true)).
struct ReLU6Options {
  /*implicit*/ ReLU6Options(bool inplace = false) : inplace_(inplace) {}
  EMBER_ARG(bool, inplace);
};

/// RReLU(RReLUOptions().lower(0.1).upper(0.3)); the module trains with random slopes.
struct RReLUOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, inplace) = false;
};

/// Softplus(SoftplusOptions().beta(2).threshold(10)).
struct SoftplusOptions {
  EMBER_ARG(double, beta) = 1.0;
  EMBER_ARG(double, threshold) = 20.0;
};

/// Softshrink(SoftshrinkOptions().lambda(1.0)).
struct SoftshrinkOptions {
  /*implicit*/ SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}
  EMBER_ARG(double, lambda);
};

/// Threshold(ThresholdOptions(0.1, 20)): value where x <= threshold.
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  EMBER_ARG(double, threshold);
  EMBER_ARG(double, value);
  EMBER_ARG(bool, inplace) = false;
};

namespace functional {
using ReLUFuncOptions = ReLUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using GELUFuncOptions = GELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using GLUFuncOptions = GLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ReLU6FuncOptions = ReLU6Options;
using SoftplusFuncOptions = SoftplusOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using ThresholdFuncOptions = ThresholdOptions;

/// F::rrelu(x, F::RReLUFuncOptions().training(true)): random slopes only when training.
struct RReLUFuncOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};

/// gumbel_softmax(logits): temperature tau, hard (one-hot forward, soft gradient), dim.
struct GumbelSoftmaxFuncOptions {
  EMBER_ARG(double, tau) = 1.0;
  EMBER_ARG(bool, hard) = false;
  EMBER_ARG(int, dim) = -1;
};

}  // namespace functional

}  // namespace nn
}  // namespace ember
