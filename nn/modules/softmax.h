// Softmax / LogSoftmax layers over F::softmax / F::log_softmax, printing as Python's repr
// ("Softmax(dim=1)").
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/softmax.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/softmax.h"

namespace ember {
namespace nn {

/// Softmax(1): probabilities along dim 1.
class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  SoftmaxOptions options;
};
EMBER_MODULE(Softmax);

/// LogSoftmax(1): log-probabilities along dim 1.
class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : LogSoftmaxImpl(LogSoftmaxOptions(dim)) {}
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  LogSoftmaxOptions options;
};
EMBER_MODULE(LogSoftmax);

}  // namespace nn
}  // namespace ember
