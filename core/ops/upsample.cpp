// Upsampling ops as separable maps (Note [Separable maps] in separable_map.h): nearest is a
// gather along each axis, (bi/tri)linear two weighted taps per axis, bicubic four; the 3-d
// ops are two passes. Backward is the adjoint map.
// Indices and weights are computed in float for float inputs and in double for double ones,
// as PyTorch's kernels compute them in the input's opmath type.
#include "ember/core/ops/upsample.h"

#include <algorithm>
#include <cmath>

#include "ember/core/ops/separable_map.h"
#include "ember/core/ops/shape.h"

namespace ember {

using resample::AxisMap;
using resample::AxisMapPtr;

namespace {

/// compute_scales_value: 1 / scale when a positive scale is given, else in / out.
template <class F>
F scales_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale.has_value() && *scale > 0 ? static_cast<F>(1.0 / *scale) : static_cast<F>(in) / static_cast<F>(out);
}

/// nearest_idx: identity and exact doubling are special-cased, as in PyTorch.
AxisMapPtr nearest_axis(int64_t in, int64_t out, std::optional<double> scale) {
  auto m = std::make_shared<AxisMap>(in);
  const float s = scales_value<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i;
    if (out == in) i = o;
    else if (out == 2 * in) i = o >> 1;
    else i = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
    m->add(i);
    m->close();
  }
  return m;
}

/// compute_source_index_and_lambda for each output, in compute type F.
template <class F>
AxisMapPtr linear_axis(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  auto m = std::make_shared<AxisMap>(in);
  F ratio = align_corners ? (out > 1 ? static_cast<F>(in - 1) / static_cast<F>(out - 1) : F(0))
                          : scales_value<F>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {
      m->add(o);
      m->close();
      continue;
    }
    F src = align_corners ? ratio * static_cast<F>(o) : ratio * (static_cast<F>(o) + F(0.5)) - F(0.5);
    if (!align_corners && src < 0) src = 0;
    const int64_t i0 = static_cast<int64_t>(src);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const F l1 = std::min(std::max(src - static_cast<F>(i0), F(0)), F(1));
    const F l0 = F(1) - l1;
    m->add(i0, static_cast<double>(l0));
    m->add(i1, static_cast<double>(l1));
    m->close();
  }
  return m;
}

/// Keys' cubic convolution kernel with A = -0.75 (PyTorch's): |x| <= 1 and 1 < |x| < 2.
template <class F>
F cubic_near(F x, F a) {
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
template <class F>
F cubic_far(F x, F a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/// Four taps around each source position, indices clamped to the edge (PyTorch's
/// upsample_get_value_bounded); the source index is not clamped at 0 as the linear one is.
template <class F>
AxisMapPtr cubic_axis(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  auto m = std::make_shared<AxisMap>(in);
  const F a = F(-0.75);
  F ratio = align_corners ? (out > 1 ? static_cast<F>(in - 1) / static_cast<F>(out - 1) : F(0))
                          : scales_value<F>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    const F src = align_corners ? ratio * static_cast<F>(o) : ratio * (static_cast<F>(o) + F(0.5)) - F(0.5);
    const F fl = std::floor(src);
    const int64_t i = static_cast<int64_t>(fl);
    const F t = src - fl;
    const F w[4] = {cubic_far<F>(t + 1, a), cubic_near<F>(t, a), cubic_near<F>(1 - t, a), cubic_far<F>(2 - t, a)};
    for (int64_t k = 0; k < 4; ++k) m->add(std::clamp<int64_t>(i - 1 + k, 0, in - 1), static_cast<double>(w[k]));
    m->close();
  }
  return m;
}

AxisMapPtr linear_axis_for(const Tensor& x, int64_t in, int64_t out, bool align_corners, std::optional<double> s) {
  return x.dtype() == kDouble ? linear_axis<double>(in, out, align_corners, s)
                              : linear_axis<float>(in, out, align_corners, s);
}

AxisMapPtr cubic_axis_for(const Tensor& x, int64_t in, int64_t out, bool align_corners, std::optional<double> s) {
  return x.dtype() == kDouble ? cubic_axis<double>(in, out, align_corners, s)
                              : cubic_axis<float>(in, out, align_corners, s);
}

void check_3d(const Tensor& input, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 3, "It is expected output_size equals to 3, but got size ", output_size.size());
  EMBER_CHECK(input.dim() == 5, "It is expected input_size equals to 5, but got size ", input.dim());
  const int64_t D = input.size(2), H = input.size(3), W = input.size(4);
  EMBER_CHECK(D > 0 && H > 0 && W > 0 && output_size[0] > 0 && output_size[1] > 0 && output_size[2] > 0,
              "Input and output sizes should be greater than 0, but got input (D: ", D, ", H: ", H, ", W: ", W,
              ") output (D: ", output_size[0], ", H: ", output_size[1], ", W: ", output_size[2], ")");
}

/// The maps act on the last two dims: (H, W) first, then D, swapped with H so that it is the
/// height axis of the second pass (as 3-d padding does).
Tensor apply_3d(const Tensor& input, AxisMapPtr d, AxisMapPtr h, AxisMapPtr w, const resample::MapNames& names) {
  Tensor y = resample::apply_map(input, std::move(h), std::move(w), names);
  Tensor z = resample::apply_map(y.transpose(-3, -2), std::move(d), resample::identity_axis(y.size(-1)), names);
  return z.transpose(-3, -2);
}

void check_2d(const Tensor& input, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ", output_size.size());
  EMBER_CHECK(input.dim() == 4, "It is expected input_size equals to 4, but got size ", input.dim());
  const int64_t H = input.size(2), W = input.size(3);
  EMBER_CHECK(H > 0 && W > 0 && output_size[0] > 0 && output_size[1] > 0,
              "Input and output sizes should be greater than 0, but got input (H: ", H, ", W: ", W,
              ") output (H: ", output_size[0], ", W: ", output_size[1], ")");
}

void check_1d(const Tensor& input, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 1, "It is expected output_size equals to 1, but got size ", output_size.size());
  EMBER_CHECK(input.dim() == 3, "It is expected input_size equals to 3, but got size ", input.dim());
  const int64_t W = input.size(2);
  EMBER_CHECK(W > 0 && output_size[0] > 0, "Input and output sizes should be greater than 0, but got input (W: ", W,
              ") and output (W: ", output_size[0], ")");
}

}  // namespace

Tensor upsample_nearest1d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales) {
  check_1d(input, output_size);
  AxisMapPtr w = nearest_axis(input.size(2), output_size[0], scales);
  return resample::apply_map(input, nullptr, w, {"upsample_nearest1d", "UpsampleNearest1D"});
}

Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  check_2d(input, output_size);
  return resample::apply_map(input, nearest_axis(input.size(2), output_size[0], scales_h),
                             nearest_axis(input.size(3), output_size[1], scales_w),
                             {"upsample_nearest2d", "UpsampleNearest2D"});
}

Tensor upsample_linear1d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales) {
  check_1d(input, output_size);
  AxisMapPtr w = linear_axis_for(input, input.size(2), output_size[0], align_corners, scales);
  return resample::apply_map(input, nullptr, w, {"upsample_linear1d", "UpsampleLinear1D", true});
}

Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  check_2d(input, output_size);
  return resample::apply_map(input, linear_axis_for(input, input.size(2), output_size[0], align_corners, scales_h),
                             linear_axis_for(input, input.size(3), output_size[1], align_corners, scales_w),
                             {"upsample_bilinear2d", "UpsampleBilinear2D", true});
}

Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  check_2d(input, output_size);
  return resample::apply_map(input, cubic_axis_for(input, input.size(2), output_size[0], align_corners, scales_h),
                             cubic_axis_for(input, input.size(3), output_size[1], align_corners, scales_w),
                             {"upsample_bicubic2d", "UpsampleBicubic2D", true});
}

Tensor upsample_nearest3d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_d,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  check_3d(input, output_size);
  return apply_3d(input, nearest_axis(input.size(2), output_size[0], scales_d),
                  nearest_axis(input.size(3), output_size[1], scales_h),
                  nearest_axis(input.size(4), output_size[2], scales_w), {"upsample_nearest3d", "UpsampleNearest3D"});
}

Tensor upsample_trilinear3d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d, std::optional<double> scales_h,
                            std::optional<double> scales_w) {
  check_3d(input, output_size);
  return apply_3d(input, linear_axis_for(input, input.size(2), output_size[0], align_corners, scales_d),
                  linear_axis_for(input, input.size(3), output_size[1], align_corners, scales_h),
                  linear_axis_for(input, input.size(4), output_size[2], align_corners, scales_w),
                  {"upsample_trilinear3d", "UpsampleTrilinear3D", true});
}

}  // namespace ember
