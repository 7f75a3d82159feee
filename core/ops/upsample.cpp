// Upsampling ops as separable maps (Note [Separable maps] in separable_map.h): nearest is a
// gather along each axis, (bi)linear two weighted taps per axis. Backward is the adjoint map.
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

AxisMapPtr linear_axis_for(const Tensor& x, int64_t in, int64_t out, bool align_corners, std::optional<double> s) {
  return x.dtype() == kDouble ? linear_axis<double>(in, out, align_corners, s)
                              : linear_axis<float>(in, out, align_corners, s);
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

}  // namespace ember
