// Convolution layers: parameter shapes, PyTorch's checks and default initialisation, the
// padding modes (through F::pad), and Python's repr.
#include "ember/nn/modules/conv.h"

#include <cmath>
#include <sstream>
#include <string>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/padding.h"
#include "ember/nn/init.h"

namespace ember {
namespace nn {
namespace {

template <size_t D>
bool all_equal(const ExpandingArray<D>& a, int64_t v) {
  for (size_t i = 0; i < D; ++i)
    if (a[i] != v) return false;
  return true;
}

/// {first, second, *kernel}: (out, in / groups, ...) for a convolution, (in, out / groups,
/// ...) for a transposed one.
template <size_t D>
std::vector<int64_t> weight_shape(int64_t first, int64_t second, const ExpandingArray<D>& kernel) {
  std::vector<int64_t> shape{first, second};
  for (size_t i = 0; i < D; ++i) shape.push_back(kernel[i]);
  return shape;
}

/// PyTorch's _ConvNd.reset_parameters: weight ~ kaiming_uniform(a=sqrt(5)), which is
/// U(±1/sqrt(fan_in)); bias ~ U(±1/sqrt(fan_in)) (fan_in from the weight's shape).
void init_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
  (void)fan_out;
  if (fan_in == 0) return;
  const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

/// _ConvNd.__init__'s checks.
template <size_t D>
void check_conv_options(int64_t in, int64_t out, int64_t groups, const nn::detail::conv_padding_t<D>* padding,
                        const ExpandingArray<D>& stride) {
  EMBER_CHECK(groups > 0, "groups must be a positive integer");
  EMBER_CHECK(in % groups == 0, "in_channels must be divisible by groups");
  EMBER_CHECK(out % groups == 0, "out_channels must be divisible by groups");
  if (padding && std::holds_alternative<enumtype::kSame>(*padding))
    EMBER_CHECK(all_equal(stride, 1), "padding='same' is not supported for strided convolutions");
}

/// F::pad's pads for a padding_mode other than zeros, last dimension first (Python's
/// _reversed_padding_repeated_twice): "same" puts the odd extra on the right.
template <size_t D>
std::vector<int64_t> reversed_padding(const nn::detail::conv_padding_t<D>& padding, const ExpandingArray<D>& kernel,
                                      const ExpandingArray<D>& dilation) {
  std::vector<int64_t> pads(2 * D, 0);
  for (size_t i = 0; i < D; ++i) {
    const size_t d = D - 1 - i;
    int64_t left = 0, right = 0;
    if (const auto* a = std::get_if<ExpandingArray<D>>(&padding)) {
      left = right = (*a)[d];
    } else if (std::holds_alternative<enumtype::kSame>(padding)) {
      const int64_t total = dilation[d] * (kernel[d] - 1);
      left = total / 2;
      right = total - left;
    }
    pads[2 * i] = left;
    pads[2 * i + 1] = right;
  }
  return pads;
}

/// The convolution of a Conv layer, padding through F::pad when padding_mode is not zeros.
template <size_t D>
Tensor conv_forward_impl(const Tensor& input, const Tensor& weight, const Tensor& bias,
                         const ExpandingArray<D>& stride, const nn::detail::conv_padding_t<D>& padding,
                         const ExpandingArray<D>& dilation, int64_t groups,
                         const nn::detail::conv_padding_mode_t& mode, const std::vector<int64_t>& pads) {
  functional::ConvFuncOptions<D> f;
  f.bias(bias).stride(stride).dilation(dilation).groups(groups);
  Tensor x = input;
  if (std::holds_alternative<enumtype::kZeros>(mode)) {
    f.padding(padding);
  } else {
    x = ember::pad(input, pads, enum_name(mode));
    f.padding(ExpandingArray<D>(0));
  }
  if constexpr (D == 1)
    return functional::conv1d(x, weight, f);
  else if constexpr (D == 2)
    return functional::conv2d(x, weight, f);
  else
    return functional::conv3d(x, weight, f);
}

template <size_t D>
const char* transpose_name() {
  return D == 1 ? "ConvTranspose1d" : D == 2 ? "ConvTranspose2d" : "ConvTranspose3d";
}

/// How Python prints a padding: numbers (omitted when all zero) or the string.
template <size_t D>
std::string padding_text(const nn::detail::conv_padding_t<D>& padding) {
  if (const auto* a = std::get_if<ExpandingArray<D>>(&padding)) {
    if (all_equal(*a, 0)) return "";
    std::ostringstream s;
    s << *a;
    return s.str();
  }
  return std::holds_alternative<enumtype::kSame>(padding) ? "same" : "valid";
}

/// Python's _ConvNd.extra_repr inside "Name(...)".
template <size_t D>
void print_conv(std::ostream& os, const char* name, int64_t in, int64_t out, const ExpandingArray<D>& kernel,
                const ExpandingArray<D>& stride, const std::string& padding, const ExpandingArray<D>& dilation,
                const ExpandingArray<D>* output_padding, int64_t groups, bool bias, const std::string& mode) {
  os << name << "(" << in << ", " << out << ", kernel_size=" << kernel << ", stride=" << stride;
  if (!padding.empty()) os << ", padding=" << padding;
  if (!all_equal(dilation, 1)) os << ", dilation=" << dilation;
  if (output_padding && !all_equal(*output_padding, 0)) os << ", output_padding=" << *output_padding;
  if (groups != 1) os << ", groups=" << groups;
  if (!bias) os << ", bias=False";
  if (mode != "zeros") os << ", padding_mode=" << mode;
  os << ")";
}

}  // namespace

// ---- Conv1d / Conv2d ------------------------------------------------------------------

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset() {
  const ConvOptions<D>& o = options;
  check_conv_options<D>(o.in_channels(), o.out_channels(), o.groups(), &o.padding(), o.stride());
  reversed_padding_repeated_twice_ = reversed_padding<D>(o.padding(), o.kernel_size(), o.dilation());
  weight = this->register_parameter(
      "weight", ember::empty(weight_shape<D>(o.out_channels(), o.in_channels() / o.groups(), o.kernel_size())));
  if (o.bias())
    bias = this->register_parameter("bias", ember::empty({o.out_channels()}));
  else
    bias = this->register_parameter("bias", Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset_parameters() {
  init_conv(weight, bias);
}

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  const ConvOptions<D>& o = options;
  const char* name = D == 1 ? "Conv1d" : D == 2 ? "Conv2d" : "Conv3d";
  print_conv<D>(stream, name, o.in_channels(), o.out_channels(), o.kernel_size(), o.stride(),
                padding_text<D>(o.padding()), o.dilation(), nullptr, o.groups(), o.bias(),
                enum_name(o.padding_mode()));
}

template <size_t D, class Derived>
Tensor ConvNdImpl<D, Derived>::conv_forward(const Tensor& input) const {
  return conv_forward_impl<D>(input, weight, bias, options.stride(), options.padding(), options.dilation(),
                              options.groups(), options.padding_mode(), reversed_padding_repeated_twice_);
}

Conv1dImpl::Conv1dImpl(Conv1dOptions options_) : ConvNdImpl(std::move(options_)) { reset(); }
Tensor Conv1dImpl::forward(const Tensor& input) { return conv_forward(input); }

Conv2dImpl::Conv2dImpl(Conv2dOptions options_) : ConvNdImpl(std::move(options_)) { reset(); }
Tensor Conv2dImpl::forward(const Tensor& input) { return conv_forward(input); }

Conv3dImpl::Conv3dImpl(Conv3dOptions options_) : ConvNdImpl(std::move(options_)) { reset(); }
Tensor Conv3dImpl::forward(const Tensor& input) { return conv_forward(input); }

template class ConvNdImpl<1, Conv1dImpl>;
template class ConvNdImpl<2, Conv2dImpl>;
template class ConvNdImpl<3, Conv3dImpl>;

// ---- ConvTranspose1d / ConvTranspose2d ------------------------------------------------

template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::reset() {
  const ConvTransposeOptions<D>& o = options;
  check_conv_options<D>(o.in_channels(), o.out_channels(), o.groups(), nullptr, o.stride());
  EMBER_CHECK(std::holds_alternative<enumtype::kZeros>(o.padding_mode()),
              "Only \"zeros\" padding mode is supported for ", transpose_name<D>());
  weight = this->register_parameter(
      "weight", ember::empty(weight_shape<D>(o.in_channels(), o.out_channels() / o.groups(), o.kernel_size())));
  if (o.bias())
    bias = this->register_parameter("bias", ember::empty({o.out_channels()}));
  else
    bias = this->register_parameter("bias", Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::reset_parameters() {
  init_conv(weight, bias);
}

template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  const ConvTransposeOptions<D>& o = options;
  print_conv<D>(stream, transpose_name<D>(), o.in_channels(), o.out_channels(), o.kernel_size(), o.stride(),
                padding_text<D>(o.padding()), o.dilation(), &o.output_padding(), o.groups(), o.bias(),
                enum_name(o.padding_mode()));
}

// Python's _ConvTransposeNd._output_padding: the output_padding giving output_size, which
// must lie between the smallest output (output_padding 0) and that plus stride - 1.
template <size_t D, class Derived>
Tensor ConvTransposeNdImpl<D, Derived>::transposed_forward(const Tensor& input,
                                                           const std::optional<IntArrayRef>& output_size) {
  const ConvTransposeOptions<D>& o = options;
  std::vector<int64_t> output_padding = o.output_padding().vec();
  if (output_size) {
    const int64_t non_spatial = input.dim() == static_cast<int64_t>(D) + 2 ? 2 : 1;
    IntArrayRef size = *output_size;
    if (static_cast<int64_t>(size.size()) == non_spatial + static_cast<int64_t>(D)) size = size.slice(non_spatial);
    EMBER_CHECK(size.size() == D, "ConvTranspose", D, "D: for ", input.dim(), "D input, output_size must have ", D,
                " or ", non_spatial + static_cast<int64_t>(D), " elements (got ", output_size->size(), ")");
    std::vector<int64_t> min_sizes, max_sizes;
    for (size_t d = 0; d < D; ++d) {
      min_sizes.push_back((input.size(static_cast<int64_t>(d) + non_spatial) - 1) * o.stride()[d] -
                          2 * o.padding()[d] + o.dilation()[d] * (o.kernel_size()[d] - 1) + 1);
      max_sizes.push_back(min_sizes[d] + o.stride()[d] - 1);
    }
    for (size_t d = 0; d < D; ++d)
      EMBER_CHECK(size[d] >= min_sizes[d] && size[d] <= max_sizes[d], "requested an output size of ", size,
                  ", but valid sizes range from ", IntArrayRef(min_sizes), " to ", IntArrayRef(max_sizes),
                  " (for an input of torch.Size(", input.sizes().slice(static_cast<size_t>(non_spatial)), "))");
    for (size_t d = 0; d < D; ++d) output_padding[d] = size[d] - min_sizes[d];
  }
  functional::ConvTransposeFuncOptions<D> f;
  f.bias(bias).stride(o.stride()).padding(o.padding()).output_padding(ExpandingArray<D>(output_padding))
      .groups(o.groups()).dilation(o.dilation());
  if constexpr (D == 1)
    return functional::conv_transpose1d(input, weight, f);
  else if constexpr (D == 2)
    return functional::conv_transpose2d(input, weight, f);
  else
    return functional::conv_transpose3d(input, weight, f);
}

ConvTranspose1dImpl::ConvTranspose1dImpl(ConvTranspose1dOptions options_) : ConvTransposeNdImpl(std::move(options_)) {
  reset();
}
Tensor ConvTranspose1dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  return transposed_forward(input, output_size);
}

ConvTranspose2dImpl::ConvTranspose2dImpl(ConvTranspose2dOptions options_) : ConvTransposeNdImpl(std::move(options_)) {
  reset();
}
Tensor ConvTranspose2dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  return transposed_forward(input, output_size);
}

ConvTranspose3dImpl::ConvTranspose3dImpl(ConvTranspose3dOptions options_)
    : ConvTransposeNdImpl(std::move(options_)) {
  reset();
}
Tensor ConvTranspose3dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  return transposed_forward(input, output_size);
}

template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;
template class ConvTransposeNdImpl<3, ConvTranspose3dImpl>;

// ---- LazyConv2d -----------------------------------------------------------------------

LazyConv2dImpl::LazyConv2dImpl(LazyConv2dOptions options_) : options(std::move(options_)) { reset(); }

Conv2dOptions LazyConv2dImpl::conv_options() const {
  return Conv2dOptions(in_channels, options.out_channels(), options.kernel_size())
      .stride(options.stride())
      .padding(options.padding())
      .dilation(options.dilation())
      .groups(options.groups())
      .bias(options.bias())
      .padding_mode(options.padding_mode());
}

// Before the first input the parameters are registered undefined (so the names exist and
// parameters() skips them); a clone of an initialised module recreates them at full size.
void LazyConv2dImpl::reset() {
  check_conv_options<2>(in_channels, options.out_channels(), options.groups(), &options.padding(), options.stride());
  if (in_channels > 0) {
    weight = register_parameter(
        "weight", ember::empty(weight_shape<2>(options.out_channels(), in_channels / options.groups(),
                                               options.kernel_size())));
    bias = options.bias() ? register_parameter("bias", ember::empty({options.out_channels()}))
                          : register_parameter("bias", Tensor(), false);
    reset_parameters();
  } else {
    weight = register_parameter("weight", Tensor(), false);
    bias = register_parameter("bias", Tensor(), false);
  }
}

void LazyConv2dImpl::reset_parameters() {
  if (weight.defined()) init_conv(weight, bias);
}

void LazyConv2dImpl::pretty_print(std::ostream& stream) const {
  const LazyConv2dOptions& o = options;
  print_conv<2>(stream, has_uninitialized_params() ? "LazyConv2d" : "Conv2d", in_channels, o.out_channels(),
                o.kernel_size(), o.stride(), padding_text<2>(o.padding()), o.dilation(), nullptr, o.groups(),
                o.bias(), enum_name(o.padding_mode()));
}

Tensor LazyConv2dImpl::forward(const Tensor& input) {
  if (has_uninitialized_params()) {
    EMBER_CHECK(input.dim() == 3 || input.dim() == 4,
                "Expected 3D (unbatched) or 4D (batched) input to LazyConv2d, but got input of size: ",
                input.sizes());
    const int64_t in = input.size(input.dim() == 4 ? 1 : 0);
    EMBER_CHECK(in % options.groups() == 0, "in_channels must be divisible by groups");
    in_channels = in;
    NoGradGuard no_grad;
    TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
    // Fill the registered slots so named_parameters() keeps the keys "weight" and "bias".
    weight = parameters_["weight"] =
        ember::empty(weight_shape<2>(options.out_channels(), in / options.groups(), options.kernel_size()), opts);
    weight.requires_grad_(true);
    if (options.bias()) {
      bias = parameters_["bias"] = ember::empty({options.out_channels()}, opts);
      bias.requires_grad_(true);
    }
    reset_parameters();
  }
  const Conv2dOptions o = conv_options();
  return conv_forward_impl<2>(input, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups(),
                              o.padding_mode(), reversed_padding<2>(o.padding(), o.kernel_size(), o.dilation()));
}

}  // namespace nn
}  // namespace ember
