// Softmax / Softmin / LogSoftmax / Softmax2d modules: forward through F::, repr as Python's.
#include "ember/nn/modules/softmax.h"

#include "ember/core/error.h"

namespace ember {
namespace nn {

void SoftmaxImpl::pretty_print(std::ostream& stream) const { stream << "Softmax(dim=" << options.dim() << ")"; }
Tensor SoftmaxImpl::forward(const Tensor& input) {
  return functional::softmax(input, functional::SoftmaxFuncOptions(options.dim()));
}

void LogSoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "LogSoftmax(dim=" << options.dim() << ")";
}
Tensor LogSoftmaxImpl::forward(const Tensor& input) {
  return functional::log_softmax(input, functional::LogSoftmaxFuncOptions(options.dim()));
}

void SoftminImpl::pretty_print(std::ostream& stream) const { stream << "Softmin(dim=" << options.dim() << ")"; }
Tensor SoftminImpl::forward(const Tensor& input) {
  return functional::softmin(input, functional::SoftminFuncOptions(options.dim()));
}

void Softmax2dImpl::pretty_print(std::ostream& stream) const { stream << "Softmax2d()"; }
Tensor Softmax2dImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, "Softmax2d: expected input to be 3D or 4D, got ", input.dim(),
              "D instead");
  return functional::softmax(input, functional::SoftmaxFuncOptions(-3));
}

}  // namespace nn
}  // namespace ember
