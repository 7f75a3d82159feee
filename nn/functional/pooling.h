// F::max_pool1d/2d/3d, F::avg_pool1d/2d/3d, adaptive pooling, F::max_unpool1d/2d/3d,
// F::fractional_max_pool2d/3d and F::lp_pool1d/2d (torch.nn.functional's), taking libtorch's
// option classes and calling the core ops in core/ops/pooling.h.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/ops/pooling.h"
#include "ember/core/ops/random.h"
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

inline Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return ember::max_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
inline std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input,
                                                          const MaxPool3dFuncOptions& o) {
  return ember::max_pool3d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                                        o.ceil_mode());
}

inline Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  return ember::avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
inline Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return ember::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                           o.divisor_override());
}
inline Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  return ember::avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                           o.count_include_pad(), o.divisor_override());
}

namespace detail {
/// Output sizes with None filled in from the input's last D dims (Python's
/// _list_with_default).
template <size_t D>
std::vector<int64_t> adaptive_size(const Tensor& input, const ExpandingArrayWithOptionalElem<D>& size) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < D; ++i) {
    if (size[i]) {
      out.push_back(*size[i]);
    } else {
      EMBER_CHECK(input.dim() >= static_cast<int64_t>(D), "Input dimension should be at least ", D + 1);
      out.push_back(input.size(static_cast<int64_t>(i) - static_cast<int64_t>(D)));
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
inline Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  return ember::adaptive_avg_pool3d(input, detail::adaptive_size(input, o.output_size()));
}
inline std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                                   const AdaptiveMaxPool3dFuncOptions& o) {
  return ember::adaptive_max_pool3d(input, detail::adaptive_size(input, o.output_size()));
}
inline Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, o));
}

namespace detail {
/// Python's _unpool_output_size: (in - 1) * stride + kernel - 2 * padding per spatial dim,
/// or the given output_size (spatial, or with batch and channels), which must lie within
/// stride of that.
template <size_t D>
std::vector<int64_t> unpool_output_size(const Tensor& input, const MaxUnpoolFuncOptions<D>& o) {
  std::vector<int64_t> defaults;
  for (size_t d = 0; d < D; ++d)
    defaults.push_back((input.size(static_cast<int64_t>(d) - static_cast<int64_t>(D)) - 1) * o.stride()[d] +
                       o.kernel_size()[d] - 2 * o.padding()[d]);
  if (!o.output_size()) return defaults;
  std::vector<int64_t> size = *o.output_size();
  if (size.size() == D + 2) size.erase(size.begin(), size.begin() + 2);
  EMBER_CHECK(size.size() == D, "output_size should be a sequence containing ", D, " or ", D + 2,
              " elements, but it has a length of '", size.size(), "'");
  for (size_t d = 0; d < D; ++d) {
    const int64_t lo = defaults[d] - o.stride()[d], hi = defaults[d] + o.stride()[d];
    std::string shown = "(";
    for (size_t i = 0; i < D; ++i) shown += (i ? ", " : "") + std::to_string(size[i]);
    shown += D == 1 ? ",)" : ")";
    EMBER_CHECK(lo <= size[d] && size[d] <= hi, "invalid output_size \"", shown, "\" (dim ", d,
                " must be between ", lo, " and ", hi, ")");
  }
  return size;
}
/// Whether input has the batched or unbatched rank of a D-d pooling (otherwise the core op
/// reports the rank).
inline bool pooling_rank(const Tensor& input, int64_t d) {
  return input.dim() == d + 1 || input.dim() == d + 2;
}
}  // namespace detail

/// Scatters input into zeros at the max-pooling indices (F::max_unpool1d's (N, C, L) or
/// (C, L), through max_unpool2d of width 1, as PyTorch).
inline Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  if (!detail::pooling_rank(input, 1))
    return ember::max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), {1, 1});
  std::vector<int64_t> size = detail::unpool_output_size<1>(input, o);
  return ember::max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), {size[0], 1}).squeeze(-1);
}
inline Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  if (!detail::pooling_rank(input, 2)) return ember::max_unpool2d(input, indices, {1, 1});
  return ember::max_unpool2d(input, indices, detail::unpool_output_size<2>(input, o));
}
inline Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  if (!detail::pooling_rank(input, 3))
    return ember::max_unpool3d(input, indices, {1, 1, 1}, o.stride(), o.padding());
  return ember::max_unpool3d(input, indices, detail::unpool_output_size<3>(input, o), o.stride(),
                             o.padding());
}

namespace detail {
/// Python's fractional_max_pool{2,3}d_with_indices: output_size, or input size times
/// output_ratio (truncated); samples drawn uniformly in the input's dtype when not given.
template <size_t D>
std::tuple<Tensor, Tensor> fractional_max_pool(const Tensor& input, const FractionalMaxPoolOptions<D>& o) {
  EMBER_CHECK(o.output_size() || o.output_ratio(), "fractional_max_pool", D,
              "d requires specifying either an output_size or an output_ratio");
  std::vector<int64_t> size;
  for (size_t d = 0; d < D; ++d) {
    const int64_t in = input.size(static_cast<int64_t>(d) - static_cast<int64_t>(D));
    size.push_back(o.output_size() ? (*o.output_size())[d]
                                   : static_cast<int64_t>(static_cast<double>(in) * (*o.output_ratio())[d]));
  }
  Tensor samples = o._random_samples();
  if (!samples.defined()) {
    const int64_t batch = input.dim() == static_cast<int64_t>(D) + 1 ? 1 : input.size(0);
    samples = ember::rand({batch, input.size(-static_cast<int64_t>(D) - 1), static_cast<int64_t>(D)},
                          input.options());
  }
  if constexpr (D == 2)
    return ember::fractional_max_pool2d(input, o.kernel_size(), size, samples);
  else
    return ember::fractional_max_pool3d(input, o.kernel_size(), size, samples);
}
}  // namespace detail

inline std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& o) {
  return detail::fractional_max_pool<2>(input, o);
}
inline Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& o) {
  return std::get<0>(detail::fractional_max_pool<2>(input, o));
}
inline std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& o) {
  return detail::fractional_max_pool<3>(input, o);
}
inline Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& o) {
  return std::get<0>(detail::fractional_max_pool<3>(input, o));
}

/// Power-average pooling: (sum over the window of x^p)^(1/p), computed as PyTorch does from
/// avg_pool (no padding, count_include_pad) as (sign(a) relu(|a|) * window)^(1/p).
inline Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  Tensor out =
      ember::avg_pool1d(input.pow(o.norm_type()), o.kernel_size(), o.stride(), 0, o.ceil_mode(), true);
  return (out.sign() * out.abs().relu()).mul(o.kernel_size()[0]).pow(1.0 / o.norm_type());
}
inline Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  Tensor out =
      ember::avg_pool2d(input.pow(o.norm_type()), o.kernel_size(), o.stride(), 0, o.ceil_mode(), true);
  return (out.sign() * out.abs().relu())
      .mul(o.kernel_size()[0] * o.kernel_size()[1])
      .pow(1.0 / o.norm_type());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
