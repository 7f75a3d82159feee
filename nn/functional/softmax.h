// F::softmax / F::softmin / F::log_softmax with libtorch's option structs, over core/ops/softmax.h.
#pragma once

#include "ember/core/ops/softmax.h"
#include "ember/core/tensor.h"
#include "ember/nn/options/softmax.h"

namespace ember {
namespace nn {
namespace functional {

/// exp(x) / sum(exp(x)) along options.dim(), after casting to options.dtype() if set.
inline Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return ember::softmax(input, options.dim(), options.dtype());
}

/// softmax(-x) along options.dim(), after casting to options.dtype() if set.
inline Tensor softmin(const Tensor& input, const SoftminFuncOptions& options) {
  return ember::softmax(-input, options.dim(), options.dtype());
}

/// log(softmax(x)) along options.dim(), computed stably.
inline Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return ember::log_softmax(input, options.dim(), options.dtype());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
