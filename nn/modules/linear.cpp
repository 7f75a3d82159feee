// Linear-family layers and F::linear / F::bilinear.
#include "ember/nn/modules/linear.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/linalg.h"
#include "ember/nn/init.h"

namespace ember {
namespace nn {

namespace functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  // On both autocast lists: the bias is cast with the rest (addmm/matmul inside see autocast
  // excluded, so nothing is cast twice).
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kLowerPrecisionBoth, &linear, input, weight, bias);
  // addmm fuses the bias add (one rounding in float16/bfloat16) for the common [batch, in]
  // case and, as PyTorch does, for contiguous [batch, seq, in] inputs flattened to 2-d.
  if (input.dim() == 2 && bias.defined()) return ember::addmm(bias, input, weight.t());
  if (input.dim() == 3 && bias.defined() && input.is_contiguous())
    return ember::addmm(bias, input.view({-1, input.size(2)}), weight.t()).view({input.size(0), input.size(1), -1});
  Tensor out = input.matmul(weight.t());
  return bias.defined() ? out + bias : out;
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(input1.dim() == input2.dim(), "bilinear(): input dimensions do not match: got ", input1.dim(),
              " and ", input2.dim());
  for (int64_t i = 0; i + 1 < input1.dim(); ++i)
    EMBER_CHECK(input1.size(i) == input2.size(i), "bilinear(): input batch dimensions do not match: got ",
                input1.size(i), " and ", input2.size(i));
  EMBER_CHECK(weight.dim() == 3, "bilinear(): weight must be 3-dimensional, got ", weight.dim());
  EMBER_CHECK(input1.size(-1) == weight.size(1), "bilinear(): input1 size does not match weight size: got ",
              input1.size(-1), " but expected ", weight.size(1));
  EMBER_CHECK(input2.size(-1) == weight.size(2), "bilinear(): input2 size does not match weight size: got ",
              input2.size(-1), " but expected ", weight.size(2));
  EMBER_CHECK(!bias.defined() || bias.size(0) == weight.size(0),
              "bilinear(): bias size does not match weight size: got ", bias.size(0), " but expected ",
              weight.size(0));
  const int64_t out_f = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  std::vector<int64_t> batch(input1.sizes().begin(), input1.sizes().end() - 1);
  // x1 [N, in1] @ W as [in1, out*in2] -> [N, out, in2]; then contract in2 with x2 [N, 1, in2].
  Tensor x1 = input1.reshape({-1, in1});
  Tensor x2 = input2.reshape({-1, in2});
  Tensor w = weight.permute({1, 0, 2}).reshape({in1, out_f * in2});
  Tensor y = (x1.matmul(w).view({-1, out_f, in2}) * x2.unsqueeze(1)).sum({2});
  if (bias.defined()) y = y + bias;
  batch.push_back(out_f);
  return y.view(batch);
}

}  // namespace functional

namespace {
// PyTorch's Linear.reset_parameters: kaiming_uniform_(a=sqrt(5)) gives U(±1/sqrt(fan_in))
// for the weight; the bias draws from the same bound.
void init_linear(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    (void)fan_out;
    double bound = fan_in > 0 ? 1 / std::sqrt(static_cast<double>(fan_in)) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

const char* py_bool(bool b) { return b ? "True" : "False"; }
}  // namespace

// ---- Identity -------------------------------------------------------------------------

void IdentityImpl::pretty_print(std::ostream& stream) const { stream << "Identity()"; }
Tensor IdentityImpl::forward(const Tensor& input) { return input; }

// ---- Linear ---------------------------------------------------------------------------

LinearImpl::LinearImpl(const LinearOptions& options_) : options(options_) { reset(); }

void LinearImpl::reset() {
  weight = register_parameter("weight", ember::empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", ember::empty({options.out_features()}));
  else bias = register_parameter("bias", Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

void LinearImpl::reset_parameters() { init_linear(weight, bias); }

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
         << ", bias=" << py_bool(options.bias()) << ")";
}

Tensor LinearImpl::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

// ---- Bilinear -------------------------------------------------------------------------

BilinearImpl::BilinearImpl(const BilinearOptions& options_) : options(options_) { reset(); }

void BilinearImpl::reset() {
  weight = register_parameter(
      "weight", ember::empty({options.out_features(), options.in1_features(), options.in2_features()}));
  if (options.bias()) bias = register_parameter("bias", ember::empty({options.out_features()}));
  else bias = register_parameter("bias", Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

// PyTorch: weight and bias ~ U(±1/sqrt(in1_features)).
void BilinearImpl::reset_parameters() {
  double bound = 1 / std::sqrt(static_cast<double>(weight.size(1)));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

void BilinearImpl::pretty_print(std::ostream& stream) const {
  stream << "Bilinear(in1_features=" << options.in1_features() << ", in2_features=" << options.in2_features()
         << ", out_features=" << options.out_features() << ", bias=" << py_bool(options.bias()) << ")";
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

// ---- Flatten / Unflatten --------------------------------------------------------------

FlattenImpl::FlattenImpl(const FlattenOptions& options_) : options(options_) {}

void FlattenImpl::pretty_print(std::ostream& stream) const {
  stream << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(options.start_dim(), options.end_dim()); }

UnflattenImpl::UnflattenImpl(const UnflattenOptions& options_) : options(options_) {}

void UnflattenImpl::pretty_print(std::ostream& stream) const {
  const auto& sizes = options.sizes();
  stream << "Unflatten(dim=" << options.dim() << ", unflattened_size=(";
  for (size_t i = 0; i < sizes.size(); ++i) stream << (i ? ", " : "") << sizes[i];
  stream << (sizes.size() == 1 ? ",))" : "))");
}

Tensor UnflattenImpl::forward(const Tensor& input) { return input.unflatten(options.dim(), options.sizes()); }

// ---- LazyLinear -----------------------------------------------------------------------

LazyLinearImpl::LazyLinearImpl(const LazyLinearOptions& options_) : options(options_) { reset(); }

// Before the first input the parameters are registered undefined (so the names exist and
// parameters() skips them); a clone of an initialised module recreates them at full size.
void LazyLinearImpl::reset() {
  if (in_features > 0) {
    weight = register_parameter("weight", ember::empty({options.out_features(), in_features}));
    bias = options.bias() ? register_parameter("bias", ember::empty({options.out_features()}))
                          : register_parameter("bias", Tensor(), false);
    reset_parameters();
  } else {
    weight = register_parameter("weight", Tensor(), false);
    bias = register_parameter("bias", Tensor(), false);
  }
}

void LazyLinearImpl::reset_parameters() {
  if (weight.defined()) init_linear(weight, bias);
}

void LazyLinearImpl::pretty_print(std::ostream& stream) const {
  stream << (has_uninitialized_params() ? "LazyLinear" : "Linear") << "(in_features=" << in_features
         << ", out_features=" << options.out_features() << ", bias=" << py_bool(options.bias()) << ")";
}

Tensor LazyLinearImpl::forward(const Tensor& input) {
  if (has_uninitialized_params()) {
    EMBER_CHECK(input.dim() >= 1, "LazyLinear: expected an input with at least 1 dimension");
    in_features = input.size(-1);
    NoGradGuard no_grad;
    TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
    // Fill the registered slots so named_parameters() keeps the keys "weight" and "bias".
    weight = parameters_["weight"] = ember::empty({options.out_features(), in_features}, opts);
    weight.requires_grad_(true);
    if (options.bias()) {
      bias = parameters_["bias"] = ember::empty({options.out_features()}, opts);
      bias.requires_grad_(true);
    }
    reset_parameters();
  }
  return functional::linear(input, weight, bias);
}

}  // namespace nn
}  // namespace ember
