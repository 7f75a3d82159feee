// Fold and Unfold: forward is F::fold / F::unfold. Python prints a size given as one int as
// that int and a tuple as a tuple; here equal values print as one int, unequal ones as a
// tuple (as the pooling layers do).
#include "ember/nn/modules/fold.h"

namespace ember {
namespace nn {

namespace {

void print_size(std::ostream& s, const ExpandingArray<2>& a) {
  if (a[0] == a[1])
    s << a[0];
  else
    s << a;
}

void print_block_options(std::ostream& s, const ExpandingArray<2>& kernel_size,
                         const ExpandingArray<2>& dilation, const ExpandingArray<2>& padding,
                         const ExpandingArray<2>& stride) {
  s << "kernel_size=";
  print_size(s, kernel_size);
  s << ", dilation=";
  print_size(s, dilation);
  s << ", padding=";
  print_size(s, padding);
  s << ", stride=";
  print_size(s, stride);
  s << ")";
}

}  // namespace

void FoldImpl::pretty_print(std::ostream& stream) const {
  stream << "Fold(output_size=";
  print_size(stream, options.output_size());
  stream << ", ";
  print_block_options(stream, options.kernel_size(), options.dilation(), options.padding(), options.stride());
}

Tensor FoldImpl::forward(const Tensor& input) { return functional::fold(input, options); }

void UnfoldImpl::pretty_print(std::ostream& stream) const {
  stream << "Unfold(";
  print_block_options(stream, options.kernel_size(), options.dilation(), options.padding(), options.stride());
}

Tensor UnfoldImpl::forward(const Tensor& input) { return functional::unfold(input, options); }

}  // namespace nn
}  // namespace ember
