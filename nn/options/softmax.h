// Options of Softmax/Softmin/LogSoftmax (libtorch's, from torch/nn/options/activation.h): the
// module options hold the dim; the functional ones add an optional dtype to cast to first.
#pragma once

#include <cstdint>
#include <optional>

#include "ember/core/dtype.h"
#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// Softmax(SoftmaxOptions(1)).
struct SoftmaxOptions {
  /*implicit*/ SoftmaxOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};

/// Softmin(SoftminOptions(1)).
struct SoftminOptions {
  /*implicit*/ SoftminOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};

/// LogSoftmax(LogSoftmaxOptions(1)).
struct LogSoftmaxOptions {
  /*implicit*/ LogSoftmaxOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};

namespace functional {

/// F::softmax(x, F::SoftmaxFuncOptions(1).dtype(kFloat)).
struct SoftmaxFuncOptions {
  /*implicit*/ SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};

/// F::softmin(x, F::SoftminFuncOptions(1)): softmax of -x.
struct SoftminFuncOptions {
  /*implicit*/ SoftminFuncOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};

/// F::log_softmax(x, F::LogSoftmaxFuncOptions(1)).
struct LogSoftmaxFuncOptions {
  /*implicit*/ LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
