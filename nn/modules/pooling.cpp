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

std::string optional_size_repr(const ExpandingArrayWithOptionalElem<2>& a) {
  auto one = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("None"); };
  if (a[0] == a[1] && a[0]) return one(a[0]);
  return "(" + one(a[0]) + ", " + one(a[1]) + ")";
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

}  // namespace nn
}  // namespace ember
