// LayerNorm and GroupNorm modules.
#include "ember/nn/modules/normalization.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember {
namespace nn {

namespace {
void fill_affine(Tensor& weight, Tensor& bias) {
  if (!weight.defined()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  if (bias.defined()) bias.zero_();
}
}  // namespace

// ---- LayerNorm ------------------------------------------------------------------------

LayerNormImpl::LayerNormImpl(LayerNormOptions options_) : options(std::move(options_)) { reset(); }

void LayerNormImpl::reset() {
  bool affine = options.elementwise_affine();
  const auto& shape = options.normalized_shape();
  weight = register_parameter("weight", affine ? ember::empty(shape) : Tensor(), affine);
  const bool has_bias = affine && options.bias();
  bias = register_parameter("bias", has_bias ? ember::empty(shape) : Tensor(), has_bias);
  reset_parameters();
}

void LayerNormImpl::reset_parameters() { fill_affine(weight, bias); }

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  const auto& shape = options.normalized_shape();
  stream << "LayerNorm((";
  for (size_t i = 0; i < shape.size(); ++i) stream << (i ? ", " : "") << shape[i];
  stream << (shape.size() == 1 ? ",)" : ")") << ", eps=" << python_float(options.eps())
         << ", elementwise_affine=" << (options.elementwise_affine() ? "True" : "False") << ")";
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return functional::layer_norm(input, functional::LayerNormFuncOptions(options.normalized_shape())
                                           .weight(weight)
                                           .bias(bias)
                                           .eps(options.eps()));
}

// ---- GroupNorm ------------------------------------------------------------------------

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options_) : options(options_) { reset(); }

void GroupNormImpl::reset() {
  bool affine = options.affine();
  int64_t c = options.num_channels();
  weight = register_parameter("weight", affine ? ember::empty({c}) : Tensor(), affine);
  bias = register_parameter("bias", affine ? ember::empty({c}) : Tensor(), affine);
  reset_parameters();
}

void GroupNormImpl::reset_parameters() { fill_affine(weight, bias); }

void GroupNormImpl::pretty_print(std::ostream& stream) const {
  stream << "GroupNorm(" << options.num_groups() << ", " << options.num_channels()
         << ", eps=" << python_float(options.eps()) << ", affine=" << (options.affine() ? "True" : "False")
         << ")";
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return functional::group_norm(
      input,
      functional::GroupNormFuncOptions(options.num_groups()).weight(weight).bias(bias).eps(options.eps()));
}

}  // namespace nn
}  // namespace ember
