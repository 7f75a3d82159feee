// affine_grid and grid_sample (PyTorch's formulas: unnormalisation, border clipping, reflection,
// bilinear / trilinear weights, nearest rounding half to even) as tensor ops.
#include "ember/nn/functional/vision.h"

#include <cstdint>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/linalg.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/ternary.h"

namespace ember::nn::functional {

namespace {

/// linspace(-1, 1, steps), shrunk by (steps - 1) / steps unless align_corners: the pixel
/// centres' coordinates (PyTorch's linspace_from_neg_one).
Tensor linspace_from_neg_one(const Tensor& theta, int64_t steps, bool align_corners) {
  if (steps <= 1) return ::ember::zeros({1}, theta.options());
  Tensor range = ::ember::linspace(-1, 1, steps, theta.options());
  if (!align_corners) range = range * (static_cast<double>(steps - 1) / static_cast<double>(steps));
  return range;
}

std::vector<int64_t> vec(IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

/// Folds in into [twice_low / 2, twice_high / 2] by reflecting at its ends as often as needed.
Tensor reflect_coordinates(const Tensor& in, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return ::ember::zeros_like(in);
  const double min = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  Tensor x = (in - min).abs();
  Tensor extra = x.fmod(span);
  Tensor flips = (x / span).floor();
  return ::ember::where(flips.fmod(2).eq(0), extra + min, extra.neg() + (span + min));
}

/// A grid coordinate in [-1, 1] as a pixel coordinate of an axis of `size`, padded as asked.
Tensor source_index(const Tensor& coord, int64_t size, const GridSampleFuncOptions::padding_mode_t& padding,
                    bool align_corners) {
  Tensor x = align_corners ? (coord + 1) / 2 * static_cast<double>(size - 1)
                           : ((coord + 1) * static_cast<double>(size) - 1) / 2;
  if (std::holds_alternative<enumtype::kBorder>(padding)) {
    x = x.clamp(0, static_cast<double>(size - 1));
  } else if (std::holds_alternative<enumtype::kReflection>(padding)) {
    x = align_corners ? reflect_coordinates(x, 0, 2 * (size - 1)) : reflect_coordinates(x, -1, 2 * size - 1);
    x = x.clamp(0, static_cast<double>(size - 1));
  }
  return x;
}

}  // namespace

Tensor affine_grid(const Tensor& theta, const IntArrayRef& size, bool align_corners) {
  EMBER_CHECK(theta.is_floating_point(), "Expected theta to have floating point type, but got ", theta.dtype());
  const std::vector<int64_t> s = vec(size);
  if (s.size() == 4) {
    EMBER_CHECK(theta.dim() == 3 && theta.size(1) == 2 && theta.size(2) == 3,
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size ", size, ". Got ", theta.sizes(), ".");
  } else if (s.size() == 5) {
    EMBER_CHECK(theta.dim() == 3 && theta.size(1) == 3 && theta.size(2) == 4,
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size ", size, ". Got ", theta.sizes(), ".");
  } else {
    EMBER_CHECK(false, "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size ",
                size, ".");
  }
  for (int64_t v : s) EMBER_CHECK(v > 0, "Expected non-zero, positive output size. Got ", size);
  EMBER_CHECK(theta.size(0) == s[0], "Expected theta to hold ", s[0], " affine matrices for size ", size, ", got ",
              theta.size(0));
  const int64_t N = s[0];
  std::vector<int64_t> spatial(s.begin() + 2, s.end());  // (H, W) or (D, H, W)
  const int64_t D = static_cast<int64_t>(spatial.size());
  // The base grid (spatial..., D + 1): (x, y[, z], 1), x varying along the last axis.
  std::vector<Tensor> columns;
  for (int64_t c = 0; c < D; ++c) {
    const int64_t axis = D - 1 - c;  // x is the last spatial axis, y the one before, ...
    std::vector<int64_t> shape(static_cast<size_t>(D), 1);
    shape[static_cast<size_t>(axis)] = spatial[static_cast<size_t>(axis)];
    columns.push_back(linspace_from_neg_one(theta, spatial[static_cast<size_t>(axis)], align_corners)
                          .view(shape)
                          .expand(spatial)
                          .unsqueeze(-1));
  }
  std::vector<int64_t> ones_shape = spatial;
  ones_shape.push_back(1);
  columns.push_back(::ember::ones(ones_shape, theta.options()));
  Tensor base = ::ember::cat(columns, -1);
  int64_t points = 1;
  for (int64_t v : spatial) points *= v;
  Tensor grid = ::ember::matmul(base.reshape({points, D + 1}), theta.transpose(1, 2));  // (N, points, D)
  std::vector<int64_t> out_shape = {N};
  out_shape.insert(out_shape.end(), spatial.begin(), spatial.end());
  out_shape.push_back(D);
  return grid.reshape(out_shape);
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  EMBER_CHECK(input.defined() && grid.defined(), "grid_sampler(): expected defined input and grid");
  EMBER_CHECK((input.dim() == 4 || input.dim() == 5) && input.dim() == grid.dim(),
              "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with "
              "sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  EMBER_CHECK(input.size(0) == grid.size(0), "grid_sampler(): expected grid and input to have same batch size, but got "
              "input with sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  const int64_t D = input.dim() - 2;
  EMBER_CHECK(grid.size(-1) == D, "grid_sampler(): expected grid to have size ", D,
              " in last dimension, but got grid with sizes ", grid.sizes());
  EMBER_CHECK(input.dtype() == grid.dtype(), "grid_sampler(): expected input and grid to have same dtype, but input "
              "has ", input.dtype(), " and grid has ", grid.dtype());
  for (int64_t i = 2; i < input.dim(); ++i)
    EMBER_CHECK(input.size(i) > 0, "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                "has sizes ", input.sizes(), " with dimension ", i, " being empty");
  const bool align_corners = options.align_corners().value_or(false);
  const bool nearest = std::holds_alternative<enumtype::kNearest>(options.mode());
  const int64_t N = input.size(0), C = input.size(1);
  std::vector<int64_t> sizes, strides(static_cast<size_t>(D), 1);
  for (int64_t a = 0; a < D; ++a) sizes.push_back(input.size(2 + a));
  for (int64_t a = D - 2; a >= 0; --a)
    strides[static_cast<size_t>(a)] = strides[static_cast<size_t>(a + 1)] * sizes[static_cast<size_t>(a + 1)];
  int64_t points = 1;
  std::vector<int64_t> out_spatial;
  for (int64_t a = 0; a < D; ++a) {
    out_spatial.push_back(grid.size(1 + a));
    points *= grid.size(1 + a);
  }
  // Pixel coordinates per input axis (H, W) or (D, H, W); the grid's last dim is (x, y[, z]).
  std::vector<Tensor> coords;
  for (int64_t a = 0; a < D; ++a)
    coords.push_back(source_index(grid.select(-1, D - 1 - a).reshape({N, points}), sizes[static_cast<size_t>(a)],
                                  options.padding_mode(), align_corners));
  Tensor flat_input = input.reshape({N, C, -1});
  // One gathered corner: the pixel at integer coordinates idx (invalid ones read 0) times weight.
  auto corner = [&](const std::vector<Tensor>& idx, const Tensor& weight) {
    Tensor valid, flat;
    for (int64_t a = 0; a < D; ++a) {
      const Tensor& i = idx[static_cast<size_t>(a)];
      const int64_t n = sizes[static_cast<size_t>(a)];
      Tensor inside = i.ge(0).logical_and(i.le(n - 1));
      valid = valid.defined() ? valid.logical_and(inside) : inside;
      Tensor part = i.clamp(0, n - 1) * strides[static_cast<size_t>(a)];
      flat = flat.defined() ? flat + part : part;
    }
    Tensor gathered = flat_input.gather(2, flat.unsqueeze(1).expand({N, C, points}));
    Tensor w = weight.defined() ? weight * valid.to(weight.dtype()) : valid.to(input.dtype());
    return gathered * w.unsqueeze(1);
  };
  Tensor out;
  if (nearest) {
    std::vector<Tensor> idx;
    for (const Tensor& c : coords) idx.push_back(c.round().to(kLong));
    out = corner(idx, Tensor());
  } else {
    std::vector<Tensor> lo, frac;
    for (const Tensor& c : coords) {
      Tensor f = c.floor();
      lo.push_back(f.to(kLong));
      frac.push_back(c - f);
    }
    for (int64_t bits = 0; bits < (int64_t{1} << D); ++bits) {
      std::vector<Tensor> idx;
      Tensor weight;
      for (int64_t a = 0; a < D; ++a) {
        const bool up = (bits >> (D - 1 - a)) & 1;
        idx.push_back(up ? lo[static_cast<size_t>(a)] + 1 : lo[static_cast<size_t>(a)]);
        Tensor w = up ? frac[static_cast<size_t>(a)] : 1 - frac[static_cast<size_t>(a)];
        weight = weight.defined() ? weight * w : w;
      }
      Tensor term = corner(idx, weight);
      out = out.defined() ? out + term : term;
    }
  }
  std::vector<int64_t> out_shape = {N, C};
  out_shape.insert(out_shape.end(), out_spatial.begin(), out_spatial.end());
  return out.reshape(out_shape);
}

}  // namespace ember::nn::functional
