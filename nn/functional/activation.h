// Functional pointwise activations (F::relu, F::leaky_relu, F::elu, F::gelu, F::silu,
// F::sigmoid, F::tanh): thin wrappers over the core ops taking libtorch's option structs.
#pragma once

#include "ember/core/ops/activation.h"
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

}  // namespace functional
}  // namespace nn
}  // namespace ember
