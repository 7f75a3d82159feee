// F::interpolate (torch.nn.functional.interpolate) for nearest (3-d, 4-d, 5-d input), linear
// (3-d), bilinear and bicubic (4-d) and trilinear (5-d) modes, with Python's argument checks,
// over core/ops/upsample.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/pooling.h"
#include "ember/core/ops/upsample.h"
#include "ember/nn/options/upsampling.h"

namespace ember {
namespace nn {
namespace functional {

namespace detail {
template <class T>
std::string python_list(const std::vector<T>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}
}  // namespace detail

namespace detail {
/// "nearest-exact": output index i of a spatial dim reads input index
/// min(floor((i + 0.5) * scale), size - 1), scale = 1 / scale_factor when given, else in / out
/// (in float, as PyTorch's kernels compute it); a gather per dim, so gradients flow back.
inline Tensor upsample_nearest_exact(const Tensor& input, const std::vector<int64_t>& out,
                                     const std::vector<std::optional<double>>& scales) {
  Tensor x = input;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t dim = static_cast<int64_t>(i) + 2, in = input.size(dim);
    EMBER_CHECK(in > 0 && out[i] > 0, "Input and output sizes should be greater than 0, but got input (",
                detail::python_list(input.sizes().vec()), ") and output (", detail::python_list(out), ")");
    const float scale = scales[i] && *scales[i] > 0 ? static_cast<float>(1.0 / *scales[i])
                                                    : static_cast<float>(in) / static_cast<float>(out[i]);
    std::vector<int64_t> index(static_cast<size_t>(out[i]));
    for (int64_t o = 0; o < out[i]; ++o)
      index[static_cast<size_t>(o)] =
          std::min(static_cast<int64_t>(std::floor(static_cast<float>((static_cast<double>(o) + 0.5) * scale))), in - 1);
    x = x.index_select(dim, ::ember::tensor(index, kInt64).to(input.device()));
  }
  return x;
}
}  // namespace detail

/// Resizes the spatial dims of (N, C, W), (N, C, H, W) or (N, C, D, H, W) input to
/// options.size(), or by options.scale_factor() (output floor(size * scale), samples placed
/// with the given scale unless recompute_scale_factor).
inline Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {}) {
  const std::string mode = enum_name(options.mode());
  const bool nearest = std::holds_alternative<enumtype::kNearest>(options.mode()) ||
                       std::holds_alternative<enumtype::kNearestExact>(options.mode()) ||
                       std::holds_alternative<enumtype::kArea>(options.mode());
  EMBER_CHECK(!(nearest && options.align_corners().has_value()),
              "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
              "trilinear");
  const bool align_corners = options.align_corners().value_or(false);
  const int64_t dim = input.dim() - 2;
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < input.dim(); ++d) spatial.push_back(input.size(d));
  const auto& size = options.size();
  const auto& scale = options.scale_factor();
  EMBER_CHECK(!(size && scale), "only one of size or scale_factor should be defined");
  EMBER_CHECK(size || scale, "either size or scale_factor should be defined");
  EMBER_CHECK(!(options.recompute_scale_factor().value_or(false) && size),
              "recompute_scale_factor is not meaningful with an explicit size.");
  std::vector<int64_t> out;
  std::vector<std::optional<double>> scales(std::max<int64_t>(dim, 0));
  if (size) {
    EMBER_CHECK(static_cast<int64_t>(size->size()) == dim,
                "Input and output must have the same number of spatial dimensions, but got input with spatial "
                "dimensions of ", detail::python_list(spatial), " and output size of ", detail::python_list(*size),
                ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                "format.");
    out = *size;
  } else {
    EMBER_CHECK(static_cast<int64_t>(scale->size()) == dim,
                "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                "spatial dimensions of ", detail::python_list(spatial), " and scale_factor of shape ",
                detail::python_list(*scale),
                ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                "format.");
    const bool recompute = options.recompute_scale_factor().value_or(false);
    for (int64_t i = 0; i < dim; ++i) {
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(spatial[i]) * (*scale)[i])));
      if (!recompute) scales[i] = (*scale)[i];
    }
  }
  if (mode == "area" && input.dim() >= 3 && input.dim() <= 5) {
    if (input.dim() == 3) return ::ember::adaptive_avg_pool1d(input, out);
    if (input.dim() == 4) return ::ember::adaptive_avg_pool2d(input, out);
    return ::ember::adaptive_avg_pool3d(input, out);
  }
  if (mode == "nearest-exact" && input.dim() >= 3 && input.dim() <= 5) return detail::upsample_nearest_exact(input, out, scales);
  if (input.dim() == 3 && mode == "nearest") return upsample_nearest1d(input, out, scales[0]);
  if (input.dim() == 4 && mode == "nearest") return upsample_nearest2d(input, out, scales[0], scales[1]);
  if (input.dim() == 5 && mode == "nearest") return upsample_nearest3d(input, out, scales[0], scales[1], scales[2]);
  if (input.dim() == 3 && mode == "linear") return upsample_linear1d(input, out, align_corners, scales[0]);
  if (input.dim() == 4 && mode == "bilinear")
    return upsample_bilinear2d(input, out, align_corners, scales[0], scales[1]);
  if (input.dim() == 4 && mode == "bicubic")
    return upsample_bicubic2d(input, out, align_corners, scales[0], scales[1]);
  if (input.dim() == 5 && mode == "trilinear")
    return upsample_trilinear3d(input, out, align_corners, scales[0], scales[1], scales[2]);
  // Python's messages for a linear mode given the wrong rank (bicubic falls through).
  const int64_t needs = mode == "linear" ? 3 : mode == "bilinear" ? 4 : mode == "trilinear" ? 5 : 0;
  EMBER_CHECK(!(needs && input.dim() >= 3 && input.dim() <= 5), "Got ", input.dim(), "D input, but ", mode,
              " mode needs ", needs, "D input");
  ::ember::detail::throw_error(::ember::detail::str_cat(
      "Input Error: Only 3D, 4D and 5D input Tensors supported (got ", input.dim(),
      "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got ", mode, ")"));
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
