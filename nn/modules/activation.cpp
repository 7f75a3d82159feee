// Activation modules: forward through F::, repr as Python's.
#include "ember/nn/modules/activation.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"

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

void SELUImpl::pretty_print(std::ostream& stream) const {
  stream << "SELU(" << (options.inplace() ? "inplace=True" : "") << ")";
}
Tensor SELUImpl::forward(Tensor input) { return functional::selu(std::move(input), options); }

void CELUImpl::pretty_print(std::ostream& stream) const {
  stream << "CELU(alpha=" << python_float(options.alpha()) << (options.inplace() ? ", inplace=True" : "") << ")";
}
Tensor CELUImpl::forward(Tensor input) { return functional::celu(std::move(input), options); }

void GLUImpl::pretty_print(std::ostream& stream) const { stream << "GLU(dim=" << options.dim() << ")"; }
Tensor GLUImpl::forward(const Tensor& input) { return functional::glu(input, options); }

void HardshrinkImpl::pretty_print(std::ostream& stream) const {
  stream << "Hardshrink(" << python_float(options.lambda()) << ")";
}
Tensor HardshrinkImpl::forward(const Tensor& input) { return functional::hardshrink(input, options); }

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options_) : options(options_) { reset(); }
void HardtanhImpl::reset() {
  EMBER_CHECK(options.max_val() > options.min_val(), "max_val must be greater than min_val");
}
void HardtanhImpl::pretty_print(std::ostream& stream) const {
  stream << "Hardtanh(min_val=" << python_float(options.min_val()) << ", max_val=" << python_float(options.max_val())
         << (options.inplace() ? ", inplace=True" : "") << ")";
}
Tensor HardtanhImpl::forward(Tensor input) { return functional::hardtanh(std::move(input), options); }

void LogSigmoidImpl::pretty_print(std::ostream& stream) const { stream << "LogSigmoid()"; }
Tensor LogSigmoidImpl::forward(const Tensor& input) { return functional::logsigmoid(input); }

void MishImpl::pretty_print(std::ostream& stream) const { stream << "Mish()"; }
Tensor MishImpl::forward(const Tensor& input) { return functional::mish(input); }

PReLUImpl::PReLUImpl(const PReLUOptions& options_) : options(options_) { reset(); }
void PReLUImpl::reset() {
  weight = register_parameter("weight", ember::empty({options.num_parameters()}));
  reset_parameters();
}
void PReLUImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.fill_(options.init());
}
void PReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "PReLU(num_parameters=" << options.num_parameters() << ")";
}
Tensor PReLUImpl::forward(const Tensor& input) { return functional::prelu(input, weight); }

void ReLU6Impl::pretty_print(std::ostream& stream) const {
  stream << "ReLU6(" << (options.inplace() ? "inplace=True" : "") << ")";
}
Tensor ReLU6Impl::forward(Tensor input) { return functional::relu6(std::move(input), options); }

void RReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "RReLU(lower=" << python_float(options.lower()) << ", upper=" << python_float(options.upper())
         << (options.inplace() ? ", inplace=True" : "") << ")";
}
Tensor RReLUImpl::forward(Tensor input) {
  return functional::rrelu(std::move(input), functional::RReLUFuncOptions()
                                                 .lower(options.lower())
                                                 .upper(options.upper())
                                                 .training(is_training())
                                                 .inplace(options.inplace()));
}

void SoftplusImpl::pretty_print(std::ostream& stream) const {
  stream << "Softplus(beta=" << python_float(options.beta()) << ", threshold=" << python_float(options.threshold())
         << ")";
}
Tensor SoftplusImpl::forward(const Tensor& input) { return functional::softplus(input, options); }

void SoftshrinkImpl::pretty_print(std::ostream& stream) const {
  stream << "Softshrink(" << python_float(options.lambda()) << ")";
}
Tensor SoftshrinkImpl::forward(const Tensor& input) { return functional::softshrink(input, options); }

void SoftsignImpl::pretty_print(std::ostream& stream) const { stream << "Softsign()"; }
Tensor SoftsignImpl::forward(const Tensor& input) { return functional::softsign(input); }

void TanhshrinkImpl::pretty_print(std::ostream& stream) const { stream << "Tanhshrink()"; }
Tensor TanhshrinkImpl::forward(const Tensor& input) { return functional::tanhshrink(input); }

void ThresholdImpl::pretty_print(std::ostream& stream) const {
  stream << "Threshold(threshold=" << python_float(options.threshold()) << ", value=" << python_float(options.value())
         << (options.inplace() ? ", inplace=True" : "") << ")";
}
Tensor ThresholdImpl::forward(Tensor input) { return functional::threshold(std::move(input), options); }

}  // namespace nn
}  // namespace ember
