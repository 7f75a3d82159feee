// LayerNorm, GroupNorm, LocalResponseNorm and CrossMapLRN2d modules.
#include "ember/nn/modules/normalization.h"

#include <algorithm>
#include <vector>

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

// ---- LocalResponseNorm ----------------------------------------------------------------

Tensor LocalResponseNormImpl::forward(const Tensor& input) { return functional::local_response_norm(input, options); }

void LocalResponseNormImpl::pretty_print(std::ostream& stream) const {
  stream << "LocalResponseNorm(" << options.size() << ", alpha=" << python_float(options.alpha())
         << ", beta=" << python_float(options.beta()) << ", k=" << python_float(options.k()) << ")";
}

// ---- CrossMapLRN2d --------------------------------------------------------------------

namespace {

/// The (C, C) coefficients of the sums of squares PyTorch's CrossMapLRN2d forms: channel 0
/// sums channels [0, pre_pad), and channel c is channel c - 1's sum plus channel
/// c + pre_pad - 1 (while it exists) minus channel c - pre_pad when c > pre_pad, with
/// pre_pad = (size - 1) / 2 + 1. That last test keeps channel 0 in every later sum (Lua
/// Torch's 1-based original removed it); the coefficients reproduce PyTorch's numbers.
Tensor cross_map_window(int64_t channels, int64_t size) {
  const int64_t pre_pad = (size - 1) / 2 + 1;
  std::vector<double> m(static_cast<size_t>(channels * channels), 0.0);
  auto at = [&](int64_t c, int64_t j) -> double& { return m[static_cast<size_t>(c * channels + j)]; };
  for (int64_t j = 0; j < std::min(pre_pad, channels); ++j) at(0, j) = 1;
  for (int64_t c = 1; c < channels; ++c) {
    for (int64_t j = 0; j < channels; ++j) at(c, j) = at(c - 1, j);
    if (c < channels - pre_pad + 1) at(c, c + pre_pad - 1) += 1;
    if (c > pre_pad) at(c, c - pre_pad) -= 1;
  }
  return ember::tensor(m).view({channels, channels});
}

}  // namespace

void CrossMapLRN2dImpl::pretty_print(std::ostream& stream) const {
  stream << "CrossMapLRN2d(" << options.size() << ", alpha=" << python_float(options.alpha())
         << ", beta=" << python_float(options.beta()) << ", k=" << options.k() << ")";
}

// A composite of public ops (a channel-mixing matmul of the squares), so autograd gives the
// exact derivative of this forward.
Tensor CrossMapLRN2dImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 4, "CrossMapLRN2d: Expected input to be 4D, got ", input.dim(), "D instead.");
  const int64_t n = input.size(0), c = input.size(1);
  const Tensor window = cross_map_window(c, options.size()).to(input.device(), input.dtype());
  Tensor sums = window.matmul((input * input).reshape({n, c, -1})).view(input.sizes());
  const double scale = options.alpha() / static_cast<double>(options.size());
  return input * (sums * scale + static_cast<double>(options.k())).pow(-options.beta());
}

}  // namespace nn
}  // namespace ember
