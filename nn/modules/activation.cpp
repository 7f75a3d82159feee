// Pointwise activation modules: forward through F::, repr as Python's.
#include "ember/nn/modules/activation.h"

namespace ember {
namespace nn {

void ReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "ReLU(" << (options.inplace() ? "inplace=True" : "") << ")";
}
Tensor ReLUImpl::forward(Tensor input) { return functional::relu(std::move(input), options); }

void LeakyReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "LeakyReLU(negative_slope=" << python_float(options.negative_slope())
         << (options.inplace() ? ", inplace=True" : "") << ")";
}
Tensor LeakyReLUImpl::forward(Tensor input) { return functional::leaky_relu(std::move(input), options); }

void ELUImpl::pretty_print(std::ostream& stream) const {
  stream << "ELU(alpha=" << python_float(options.alpha()) << (options.inplace() ? ", inplace=True" : "") << ")";
}
Tensor ELUImpl::forward(Tensor input) { return functional::elu(std::move(input), options); }

void GELUImpl::pretty_print(std::ostream& stream) const {
  stream << "GELU(approximate='" << options.approximate() << "')";
}
Tensor GELUImpl::forward(const Tensor& input) { return functional::gelu(input, options); }

void SiLUImpl::pretty_print(std::ostream& stream) const { stream << "SiLU()"; }
Tensor SiLUImpl::forward(const Tensor& input) { return functional::silu(input); }

void SigmoidImpl::pretty_print(std::ostream& stream) const { stream << "Sigmoid()"; }
Tensor SigmoidImpl::forward(const Tensor& input) { return functional::sigmoid(input); }

void TanhImpl::pretty_print(std::ostream& stream) const { stream << "Tanh()"; }
Tensor TanhImpl::forward(const Tensor& input) { return functional::tanh(input); }

}  // namespace nn
}  // namespace ember
