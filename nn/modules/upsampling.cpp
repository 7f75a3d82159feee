// Upsample: forward is F::interpolate with the layer's size / scale_factor / mode /
// align_corners. Python prints a size or scale given as one number as that number, a tuple
// as a tuple; here a one-element vector prints as its number.
#include "ember/nn/modules/upsampling.h"

#include <string>
#include <variant>
#include <vector>

namespace ember {
namespace nn {

namespace {

template <class T, class Print>
void print_values(std::ostream& s, const std::vector<T>& v, Print one) {
  if (v.size() == 1) {
    s << one(v[0]);
    return;
  }
  s << "(";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << one(v[i]);
  s << (v.size() == 1 ? ",)" : ")");
}

}  // namespace

void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "Upsample(";
  if (options.scale_factor()) {
    stream << "scale_factor=";
    print_values(stream, *options.scale_factor(), [](double v) { return python_float(v); });
  } else if (options.size()) {
    stream << "size=";
    print_values(stream, *options.size(), [](int64_t v) { return std::to_string(v); });
  } else {
    stream << "size=None";
  }
  stream << ", mode='" << enum_name(options.mode()) << "')";
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  // Every mode of Upsample is a mode of interpolate.
  auto mode =
      std::visit([](auto m) { return functional::InterpolateFuncOptions::mode_t(m); }, options.mode());
  return functional::interpolate(input, functional::InterpolateFuncOptions()
                                            .size(options.size())
                                            .scale_factor(options.scale_factor())
                                            .mode(mode)
                                            .align_corners(options.align_corners()));
}

}  // namespace nn
}  // namespace ember
