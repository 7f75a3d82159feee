// Softmax / Softmin / LogSoftmax / Softmax2d layers over F::softmax / F::softmin /
// F::log_softmax, printing as Python's repr ("Softmax(dim=1)").
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

/// Softmin(1): softmax of -x along dim 1.
class SoftminImpl : public Cloneable<SoftminImpl> {
 public:
  explicit SoftminImpl(int64_t dim) : SoftminImpl(SoftminOptions(dim)) {}
  explicit SoftminImpl(const SoftminOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  SoftminOptions options;
};
EMBER_MODULE(Softmin);

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

/// Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input.
class Softmax2dImpl : public Cloneable<Softmax2dImpl> {
 public:
  Softmax2dImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Softmax2d);

}  // namespace nn
}  // namespace ember
