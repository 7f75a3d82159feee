// Softmax / LogSoftmax modules: forward through F::, repr as Python's.
#include "ember/nn/modules/softmax.h"

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

}  // namespace nn
}  // namespace ember
