// F::max_pool1d/2d, F::avg_pool1d/2d and adaptive pooling (torch.nn.functional's), taking
// libtorch's option classes and calling the core ops in core/ops/pooling.h.
#pragma once

#include <tuple>

#include "ember/core/ops/pooling.h"
#include "ember/nn/options/pooling.h"

namespace ember {
namespace nn {
namespace functional {

inline Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ember::max_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
inline std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ember::max_pool1d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                                        o.ceil_mode());
}
inline Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
inline std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                                        o.ceil_mode());
}

inline Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  return ember::avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
inline Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return ember::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                           o.divisor_override());
}

namespace detail {
/// Output sizes with None filled in from the input's last two dims (Python's
/// _list_with_default).
inline std::vector<int64_t> adaptive_size(const Tensor& input, const ExpandingArrayWithOptionalElem<2>& size) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < 2; ++i) {
    if (size[i]) {
      out.push_back(*size[i]);
    } else {
      EMBER_CHECK(input.dim() >= 2, "Input dimension should be at least 3");
      out.push_back(input.size(static_cast<int64_t>(i) - 2));
    }
  }
  return out;
}
}  // namespace detail

inline Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return ember::adaptive_avg_pool1d(input, o.output_size());
}
inline Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return ember::adaptive_avg_pool2d(input, detail::adaptive_size(input, o.output_size()));
}
inline std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                                   const AdaptiveMaxPool1dFuncOptions& o) {
  return ember::adaptive_max_pool1d(input, o.output_size());
}
inline Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}
inline std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                                   const AdaptiveMaxPool2dFuncOptions& o) {
  return ember::adaptive_max_pool2d(input, detail::adaptive_size(input, o.output_size()));
}
inline Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
