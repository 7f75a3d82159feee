// Pooling layers: forward calls F::, pretty_print mirrors Python's extra_repr. Python prints a
// size given as one int as that int and a tuple as a tuple; here equal values print as one
// int, unequal ones as a tuple (AvgPool1d always prints a tuple, as Python's stores one).
#include "ember/nn/modules/pooling.h"

#include <sstream>
#include <string>

namespace ember {
namespace nn {
namespace {

namespace F = functional;

template <size_t D>
std::string size_repr(const ExpandingArray<D>& a) {
  bool same = true;
  for (size_t i = 1; i < D; ++i) same = same && a[i] == a[0];
  std::ostringstream s;
  if (same && D > 1) s << a[0];
  else s << a;
  return s.str();
}

template <size_t D>
std::string optional_size_repr(const ExpandingArrayWithOptionalElem<D>& a) {
  auto one = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("None"); };
  bool same = a[0].has_value();
  for (size_t i = 1; i < D; ++i) same = same && a[i] == a[0];
  if (same) return one(a[0]);
  std::string s = "(";
  for (size_t i = 0; i < D; ++i) s += (i ? ", " : "") + one(a[i]);
  return s + ")";
}

const char* py_bool(bool b) { return b ? "True" : "False"; }

template <size_t D>
void print_max_pool(std::ostream& s, const char* name, const MaxPoolOptions<D>& o) {
  auto one = [](const ExpandingArray<D>& a) { return D == 1 ? std::to_string(a[0]) : size_repr(a); };
  s << name << "(kernel_size=" << one(o.kernel_size()) << ", stride=" << one(o.stride())
    << ", padding=" << one(o.padding()) << ", dilation=" << one(o.dilation())
    << ", ceil_mode=" << py_bool(o.ceil_mode()) << ")";
}

}  // namespace

void MaxPool1dImpl::pretty_print(std::ostream& stream) const { print_max_pool(stream, "MaxPool1d", options); }
Tensor MaxPool1dImpl::forward(const Tensor& input) { return F::max_pool1d(input, options); }
std::tuple<Tensor, Tensor> MaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool1d_with_indices(input, options);
}

void MaxPool2dImpl::pretty_print(std::ostream& stream) const { print_max_pool(stream, "MaxPool2d", options); }
Tensor MaxPool2dImpl::forward(const Tensor& input) { return F::max_pool2d(input, options); }
std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool2d_with_indices(input, options);
}

void AvgPool1dImpl::pretty_print(std::ostream& stream) const {
  stream << "AvgPool1d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
         << ", padding=" << options.padding() << ")";
}
Tensor AvgPool1dImpl::forward(const Tensor& input) { return F::avg_pool1d(input, options); }

void AvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AvgPool2d(kernel_size=" << size_repr(options.kernel_size()) << ", stride=" << size_repr(options.stride())
         << ", padding=" << size_repr(options.padding()) << ")";
}
Tensor AvgPool2dImpl::forward(const Tensor& input) { return F::avg_pool2d(input, options); }

void AdaptiveAvgPool1dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveAvgPool1d(output_size=" << options.output_size()[0] << ")";
}
Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& input) { return F::adaptive_avg_pool1d(input, options); }

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveAvgPool2d(output_size=" << optional_size_repr(options.output_size()) << ")";
}
Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return F::adaptive_avg_pool2d(input, options); }

void AdaptiveMaxPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveMaxPool2d(output_size=" << optional_size_repr(options.output_size()) << ")";
}
Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) { return F::adaptive_max_pool2d(input, options); }
std::tuple<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool2d_with_indices(input, options);
}

void MaxPool3dImpl::pretty_print(std::ostream& stream) const { print_max_pool(stream, "MaxPool3d", options); }
Tensor MaxPool3dImpl::forward(const Tensor& input) { return F::max_pool3d(input, options); }
std::tuple<Tensor, Tensor> MaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool3d_with_indices(input, options);
}

void AvgPool3dImpl::pretty_print(std::ostream& stream) const {
  stream << "AvgPool3d(kernel_size=" << size_repr(options.kernel_size())
         << ", stride=" << size_repr(options.stride()) << ", padding=" << size_repr(options.padding()) << ")";
}
Tensor AvgPool3dImpl::forward(const Tensor& input) { return F::avg_pool3d(input, options); }

void AdaptiveAvgPool3dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveAvgPool3d(output_size=" << optional_size_repr(options.output_size()) << ")";
}
Tensor AdaptiveAvgPool3dImpl::forward(const Tensor& input) { return F::adaptive_avg_pool3d(input, options); }

void AdaptiveMaxPool1dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveMaxPool1d(output_size=" << options.output_size()[0] << ")";
}
Tensor AdaptiveMaxPool1dImpl::forward(const Tensor& input) { return F::adaptive_max_pool1d(input, options); }
std::tuple<Tensor, Tensor> AdaptiveMaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool1d_with_indices(input, options);
}

void AdaptiveMaxPool3dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveMaxPool3d(output_size=" << optional_size_repr(options.output_size()) << ")";
}
Tensor AdaptiveMaxPool3dImpl::forward(const Tensor& input) { return F::adaptive_max_pool3d(input, options); }
std::tuple<Tensor, Tensor> AdaptiveMaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool3d_with_indices(input, options);
}

// ---- MaxUnpool ---------------------------------------------------------------------------

// Python stores the sizes as tuples, so they always print as tuples: "(2,)", "(2, 2)".
template <size_t D, class Derived>
void MaxUnpoolImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "MaxUnpool" << D << "d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
         << ", padding=" << options.padding() << ")";
}

template <size_t D, class Derived>
Tensor MaxUnpoolImpl<D, Derived>::forward(const Tensor& input, const Tensor& indices,
                                          const std::optional<std::vector<int64_t>>& output_size) {
  F::MaxUnpoolFuncOptions<D> f(options.kernel_size());
  f.stride(options.stride()).padding(options.padding()).output_size(output_size);
  if constexpr (D == 1)
    return F::max_unpool1d(input, indices, f);
  else if constexpr (D == 2)
    return F::max_unpool2d(input, indices, f);
  else
    return F::max_unpool3d(input, indices, f);
}

template class MaxUnpoolImpl<1, MaxUnpool1dImpl>;
template class MaxUnpoolImpl<2, MaxUnpool2dImpl>;
template class MaxUnpoolImpl<3, MaxUnpool3dImpl>;

// ---- FractionalMaxPool -------------------------------------------------------------------

// Python's FractionalMaxPool2d.__init__ checks, in its words.
template <size_t D, class Derived>
void FractionalMaxPoolImpl<D, Derived>::reset() {
  _random_samples = this->register_buffer("_random_samples", options._random_samples());
  EMBER_CHECK(options.output_size() || options.output_ratio(), "FractionalMaxPool", D,
              "d requires specifying either an output size, or a pooling ratio");
  EMBER_CHECK(!(options.output_size() && options.output_ratio()),
              "only one of output_size and output_ratio may be specified");
  if (options.output_ratio()) {
    const auto& r = *options.output_ratio();
    bool ok = true;
    for (size_t i = 0; i < D; ++i) ok = ok && r[i] > 0 && r[i] < 1;
    EMBER_CHECK(ok, "output_ratio must be between 0 and 1 (got ", r, ")");
  }
}

// Python's modules have no extra_repr.
template <size_t D, class Derived>
void FractionalMaxPoolImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "FractionalMaxPool" << D << "d()";
}

template <size_t D, class Derived>
std::tuple<Tensor, Tensor> FractionalMaxPoolImpl<D, Derived>::forward_with_indices(const Tensor& input) {
  FractionalMaxPoolOptions<D> f = options;
  f._random_samples(_random_samples);
  if constexpr (D == 2)
    return F::fractional_max_pool2d_with_indices(input, f);
  else
    return F::fractional_max_pool3d_with_indices(input, f);
}

template <size_t D, class Derived>
Tensor FractionalMaxPoolImpl<D, Derived>::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

template class FractionalMaxPoolImpl<2, FractionalMaxPool2dImpl>;
template class FractionalMaxPoolImpl<3, FractionalMaxPool3dImpl>;

// ---- LPPool ------------------------------------------------------------------------------

template <size_t D, class Derived>
void LPPoolImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  auto one = [](const ExpandingArray<D>& a) { return D == 1 ? std::to_string(a[0]) : size_repr(a); };
  stream << "LPPool" << D << "d(norm_type=" << options.norm_type()
         << ", kernel_size=" << one(options.kernel_size()) << ", stride=" << one(options.stride())
         << ", ceil_mode=" << py_bool(options.ceil_mode()) << ")";
}

template <size_t D, class Derived>
Tensor LPPoolImpl<D, Derived>::forward(const Tensor& input) {
  if constexpr (D == 1)
    return F::lp_pool1d(input, options);
  else
    return F::lp_pool2d(input, options);
}

template class LPPoolImpl<1, LPPool1dImpl>;
template class LPPoolImpl<2, LPPool2dImpl>;

}  // namespace nn
}  // namespace ember
