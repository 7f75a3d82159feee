// Functional activations (libtorch's torch/nn/functional/activation.h, less the Softmax family
// of nn/functional/softmax.h): thin wrappers over the core ops taking libtorch's option structs.
// An inplace option writes the result back into the input.
#pragma once

#include "ember/core/ops/activation.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/random.h"
#include "ember/core/ops/unary.h"
#include "ember/core/tensor.h"
#include "ember/nn/options/activation.h"

namespace ember {
namespace nn {
namespace functional {

/// max(x, 0); inplace overwrites x.
inline Tensor relu(Tensor input, const ReLUFuncOptions& options = {}) {
  if (options.inplace()) return input.relu_();
  return ember::relu(input);
}

/// x for x > 0, negative_slope * x otherwise.
inline Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options = {}) {
  if (options.inplace()) return ember::leaky_relu_(input, options.negative_slope());
  return ember::leaky_relu(input, options.negative_slope());
}

/// x for x > 0, alpha * (exp(x) - 1) otherwise.
inline Tensor elu(Tensor input, const ELUFuncOptions& options = {}) {
  Tensor out = ember::elu(input, options.alpha());
  if (options.inplace()) return input.copy_(out);
  return out;
}

/// x * Phi(x) ("none") or its tanh approximation ("tanh").
inline Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {}) {
  return ember::gelu(input, options.approximate());
}

/// x * sigmoid(x); inplace overwrites x.
inline Tensor silu(Tensor input, bool inplace = false) {
  Tensor out = ember::silu(input);
  if (inplace) return input.copy_(out);
  return out;
}

inline Tensor sigmoid(const Tensor& input) { return ember::sigmoid(input); }
inline Tensor tanh(const Tensor& input) { return ember::tanh(input); }

/// scale * elu(x, alpha) with SELU's fixed alpha and scale.
inline Tensor selu(Tensor input, const SELUFuncOptions& options = {}) {
  Tensor out = ember::selu(input);
  if (options.inplace()) return input.copy_(out);
  return out;
}

/// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
inline Tensor celu(Tensor input, const CELUFuncOptions& options = {}) {
  Tensor out = ember::celu(input, options.alpha());
  if (options.inplace()) return input.copy_(out);
  return out;
}

/// min(max(x, min_val), max_val).
inline Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options = {}) {
  Tensor out = ember::hardtanh(input, options.min_val(), options.max_val());
  if (options.inplace()) return input.copy_(out);
  return out;
}

/// min(max(x, 0), 6).
inline Tensor relu6(Tensor input, const ReLU6FuncOptions& options = {}) {
  Tensor out = ember::relu6(input);
  if (options.inplace()) return input.copy_(out);
  return out;
}

/// leaky_relu with a random slope in [lower, upper] per element when training, else with
/// (lower + upper) / 2.
inline Tensor rrelu(Tensor input, const RReLUFuncOptions& options = {}) {
  Tensor out = ember::rrelu(input, options.lower(), options.upper(), options.training());
  if (options.inplace()) return input.copy_(out);
  return out;
}

/// value where x <= threshold, else x.
inline Tensor threshold(Tensor input, const ThresholdFuncOptions& options) {
  if (options.inplace()) return ember::threshold_(input, options.threshold(), options.value());
  return ember::threshold(input, options.threshold(), options.value());
}

/// max(0, x) + weight * min(0, x), weight broadcast along dim 1.
inline Tensor prelu(const Tensor& input, const Tensor& weight) { return ember::prelu(input, weight); }

/// a * sigmoid(b), a and b the halves of the input along options.dim().
inline Tensor glu(const Tensor& input, const GLUFuncOptions& options = {}) {
  return ember::glu(input, options.dim());
}

/// 0 where |x| <= lambda, else x.
inline Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {}) {
  return ember::hardshrink(input, options.lambda());
}

/// x -+ lambda outside [-lambda, lambda], 0 inside.
inline Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {}) {
  return ember::softshrink(input, options.lambda());
}

/// log(1 + exp(beta x)) / beta, linear where beta x > threshold.
inline Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {}) {
  return ember::softplus(input, options.beta(), options.threshold());
}

/// log(sigmoid(x)).
inline Tensor logsigmoid(const Tensor& input) { return ember::log_sigmoid(input); }
/// x tanh(softplus(x)).
inline Tensor mish(const Tensor& input) { return ember::mish(input); }
/// x / (1 + |x|).
inline Tensor softsign(const Tensor& input) { return input / (input.abs() + 1); }
/// x - tanh(x).
inline Tensor tanhshrink(const Tensor& input) { return input - input.tanh(); }

/// softmax((logits + g) / tau) with g Gumbel(0, 1) noise drawn from ember's generator; hard: the
/// one-hot of its argmax forward, the soft sample's gradient backward (straight-through).
inline Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {}) {
  // -log(1 - U) is Exp(1) for U uniform in [0, 1); -log of that is Gumbel(0, 1).
  Tensor exponential = (1 - ::ember::rand_like(logits)).log().neg();
  Tensor y_soft = ((logits - exponential.log()) / options.tau()).softmax(options.dim());
  if (!options.hard()) return y_soft;
  Tensor index = y_soft.argmax(options.dim(), /*keepdim=*/true);
  Tensor y_hard = ::ember::zeros_like(logits).scatter(options.dim(), index, 1.0);
  return y_hard - y_soft.detach() + y_soft;
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
