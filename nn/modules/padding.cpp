// The padding layers: forward is F::pad in the layer's mode, pretty_print PyTorch's repr.
#include "ember/nn/modules/padding.h"

namespace ember {
namespace nn {

namespace F = functional;

template <size_t D, class Derived>
Tensor ReflectionPadImpl<D, Derived>::forward(const Tensor& input) {
  return F::pad(input, F::PadFuncOptions(options.padding().vec()).mode(kReflect));
}

template <size_t D, class Derived>
void ReflectionPadImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "ReflectionPad" << D << "d(" << options.padding() << ")";
}

template <size_t D, class Derived>
Tensor ReplicationPadImpl<D, Derived>::forward(const Tensor& input) {
  return F::pad(input, F::PadFuncOptions(options.padding().vec()).mode(kReplicate));
}

template <size_t D, class Derived>
void ReplicationPadImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "ReplicationPad" << D << "d(" << options.padding() << ")";
}

void ZeroPad2dImpl::pretty_print(std::ostream& stream) const {
  stream << "ZeroPad2d(" << options.padding() << ")";
}

Tensor ZeroPad2dImpl::forward(const Tensor& input) {
  return F::pad(input, F::PadFuncOptions(options.padding().vec()).mode(kConstant).value(0));
}

template <size_t D, class Derived>
Tensor ConstantPadImpl<D, Derived>::forward(const Tensor& input) {
  return F::pad(input, F::PadFuncOptions(options.padding().vec()).mode(kConstant).value(options.value()));
}

template <size_t D, class Derived>
void ConstantPadImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  stream << "ConstantPad" << D << "d(padding=" << options.padding()
         << ", value=" << python_float(options.value()) << ")";
}

template class ReflectionPadImpl<1, ReflectionPad1dImpl>;
template class ReflectionPadImpl<2, ReflectionPad2dImpl>;
template class ReflectionPadImpl<3, ReflectionPad3dImpl>;
template class ReplicationPadImpl<1, ReplicationPad1dImpl>;
template class ReplicationPadImpl<2, ReplicationPad2dImpl>;
template class ReplicationPadImpl<3, ReplicationPad3dImpl>;
template class ConstantPadImpl<1, ConstantPad1dImpl>;
template class ConstantPadImpl<2, ConstantPad2dImpl>;
template class ConstantPadImpl<3, ConstantPad3dImpl>;

}  // namespace nn
}  // namespace ember
