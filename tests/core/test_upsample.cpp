// Upsampling (core/ops/upsample.cpp): nearest and (bi)linear against PyTorch 1.13 numbers
// (tests/core/fixtures/make_resample_values.py) and plain loops written here from PyTorch's
// source-index formulas, align_corners both ways, given scales, float64 gradcheck (also
// non-contiguous), gradgradcheck, node names and error texts.
#include <cmath>

#include "ember/core/ops/upsample.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::seq;
using ember::test::shape;
using ember::test::values;

namespace {

/// Linear source coordinate of output o and its two neighbours with weights (PyTorch's
/// area_pixel_compute_source_index and compute_source_index_and_lambda), in double.
struct Src {
  int64_t i0, i1;
  double l0, l1;
};
Src linear_src(int64_t o, int64_t in, int64_t out, bool align, std::optional<double> scale) {
  if (in == out) return {o, o, 1, 0};
  double ratio = align ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                       : (scale ? 1.0 / *scale : double(in) / double(out));
  double s = align ? ratio * o : std::max(ratio * (o + 0.5) - 0.5, 0.0);
  int64_t i0 = static_cast<int64_t>(s);
  int64_t i1 = i0 < in - 1 ? i0 + 1 : i0;
  double l1 = std::min(std::max(s - i0, 0.0), 1.0);
  return {i0, i1, 1 - l1, l1};
}

std::vector<double> bilinear_ref(const Tensor& x, int64_t oH, int64_t oW, bool align, std::optional<double> sh = {},
                                 std::optional<double> sw = {}) {
  const int64_t H = x.size(-2), W = x.size(-1);
  std::vector<double> v = values(x), out;
  for (int64_t p = 0; p < x.numel() / (H * W); ++p)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) {
        Src h = linear_src(oh, H, oH, align, sh), w = linear_src(ow, W, oW, align, sw);
        auto at = [&](int64_t i, int64_t j) { return v[p * H * W + i * W + j]; };
        out.push_back(h.l0 * (w.l0 * at(h.i0, w.i0) + w.l1 * at(h.i0, w.i1)) +
                      h.l1 * (w.l0 * at(h.i1, w.i0) + w.l1 * at(h.i1, w.i1)));
      }
  return out;
}

/// Nearest source: floor(o * in / out) in float, clamped (PyTorch's nearest_idx).
std::vector<double> nearest_ref(const Tensor& x, int64_t oH, int64_t oW) {
  const int64_t H = x.size(-2), W = x.size(-1);
  auto src = [](int64_t o, int64_t in, int64_t out) {
    return std::min<int64_t>(static_cast<int64_t>(std::floor(o * (float(in) / float(out)))), in - 1);
  };
  std::vector<double> v = values(x), out;
  for (int64_t p = 0; p < x.numel() / (H * W); ++p)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) out.push_back(v[p * H * W + src(oh, H, oH) * W + src(ow, W, oW)]);
  return out;
}

Tensor noncontiguous_leaf(int64_t n, int64_t c, int64_t h, int64_t w) {
  Tensor t = test::rand_leaf({n, c, w, h}).detach().transpose(2, 3).requires_grad_(true);
  REQUIRE(!t.is_contiguous());
  return t;
}

}  // namespace

TEST_CASE("upsample_nearest2d: PyTorch numbers and a plain loop") {
  Tensor z = seq({1, 1, 3, 3});
  check_close(upsample_nearest2d(z, {5, 4}), {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 3, 3, 4, 5, 6, 6, 7, 8});
  // scale_factor 1.7 gives output floor(3 * 1.7) = 5 and samples at floor(o / 1.7).
  check_close(upsample_nearest2d(z, {5, 5}, 1.7, 1.7),
              {0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 3, 3, 4, 4, 5, 6, 6, 7, 7, 8});
  manual_seed(0);
  Tensor x = rand({2, 3, 4, 5}, kDouble);
  for (auto [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{8, 10}, {4, 5}, {3, 7}, {1, 1}, {9, 2}}) {
    check_close(upsample_nearest2d(x, {oh, ow}), nearest_ref(x, oh, ow));
    check_close(upsample_nearest2d(x.to(kFloat), {oh, ow}), nearest_ref(x, oh, ow));
  }
  // 1-d; integer tensors upsample too.
  check_close(upsample_nearest1d(from_values({1, 2, 3}, {1, 1, 3}), {6}), {1, 1, 2, 2, 3, 3});
  Tensor u8 = from_values({1, 2}, {1, 1, 1, 2}).to(kByte);
  CHECK(values(upsample_nearest2d(u8, {1, 4})) == std::vector<double>{1, 1, 2, 2});
  CHECK(shape(upsample_nearest2d(zeros({0, 2, 3, 3}), {6, 6})) == std::vector<int64_t>{0, 2, 6, 6});
}

TEST_CASE("upsample_bilinear2d: PyTorch numbers, align_corners, given scales") {
  Tensor y = from_values({1, 2, 3, 4}, {1, 1, 2, 2});
  check_close(upsample_bilinear2d(y, {3, 3}, false), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  check_close(upsample_bilinear2d(y, {3, 3}, true), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  // seq 3x3 with scale_factor 1.7 (not recomputed): samples at (o + 0.5) / 1.7 - 0.5.
  check_close(upsample_bilinear2d(seq({1, 1, 3, 3}), {5, 5}, false, 1.7, 1.7),
              {0.0, 0.3823529412, 0.9705882353, 1.5588235294, 2.0, 1.1470588235, 1.5294117647, 2.1176470588,
               2.7058823529, 3.1470588235, 2.9117647059, 3.2941176471, 3.8823529412, 4.4705882353, 4.9117647059,
               4.6764705882, 5.0588235294, 5.6470588235, 6.2352941176, 6.6764705882, 6.0, 6.3823529412,
               6.9705882353, 7.5588235294, 8.0},
              1e-8);
  check_close(upsample_linear1d(seq({1, 1, 4}), {7}, false),
              {0.0, 0.3571428571, 0.9285714286, 1.5, 2.0714285714, 2.6428571429, 3.0}, 1e-8);
  manual_seed(1);
  Tensor x = rand({2, 3, 4, 5}, kDouble);
  for (bool align : {false, true})
    for (auto [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{8, 10}, {4, 5}, {3, 7}, {1, 1}, {9, 2}}) {
      INFO("align " << align << " " << oh << "x" << ow);
      check_close(upsample_bilinear2d(x, {oh, ow}, align), bilinear_ref(x, oh, ow, align), 1e-12);
      check_close(upsample_bilinear2d(x.to(kFloat), {oh, ow}, align), bilinear_ref(x, oh, ow, align), 1e-5);
    }
  check_close(upsample_bilinear2d(x, {6, 7}, false, 1.6, 1.5), bilinear_ref(x, 6, 7, false, 1.6, 1.5), 1e-12);
  // align_corners keeps the corners exactly.
  Tensor big = upsample_bilinear2d(x, {7, 9}, true);
  CHECK(values(big)[0] == values(x)[0]);
  CHECK(values(big)[8] == values(x)[4]);
}

TEST_CASE("upsample: gradients") {
  manual_seed(2);
  auto nearest = [](const TensorList& in) { return upsample_nearest2d(in[0], {5, 7}); };
  auto bilinear = [](const TensorList& in) { return upsample_bilinear2d(in[0], {5, 7}, false); };
  auto aligned = [](const TensorList& in) { return upsample_bilinear2d(in[0], {2, 7}, true); };
  for (auto fn : {+nearest, +bilinear, +aligned}) {
    check_grad(fn, {test::rand_leaf({2, 2, 3, 4})});
    check_grad(fn, {noncontiguous_leaf(1, 2, 3, 4)});
  }
  check_grad([](const TensorList& in) { return upsample_linear1d(in[0], {7}, false); }, {test::rand_leaf({2, 2, 4})});
  check_grad([](const TensorList& in) { return upsample_nearest1d(in[0], {7}); }, {test::rand_leaf({2, 2, 4})});
  // Nearest x2 copies each input to a 2x2 block, so each input's gradient is 4.
  Tensor x = seq({1, 1, 2, 2}).requires_grad_(true);
  upsample_nearest2d(x, {4, 4}).sum().backward();
  check_close(x.grad(), {4, 4, 4, 4});
  CHECK(upsample_nearest2d(x, {4, 4}).grad_fn()->name() == "UpsampleNearest2DBackward0");
  CHECK(upsample_bilinear2d(x, {4, 4}, false).grad_fn()->name() == "UpsampleBilinear2DBackward0");
  check_gradgrad(bilinear, {test::rand_leaf({1, 2, 3, 3})});
  check_gradgrad(nearest, {test::rand_leaf({1, 1, 3, 3})});
}

TEST_CASE("upsample: error texts") {
  check_error([&] { upsample_nearest2d(zeros({1, 1, 3, 0}), {2, 2}); },
              "Input and output sizes should be greater than 0, but got input (H: 3, W: 0) output (H: 2, W: 2)");
  check_error([&] { upsample_bilinear2d(zeros({1, 1, 3, 3}), {2, 0}, false); },
              "Input and output sizes should be greater than 0, but got input (H: 3, W: 3) output (H: 2, W: 0)");
  check_error([&] { upsample_nearest2d(zeros({1, 3, 3}), {2, 2}); },
              "It is expected input_size equals to 4, but got size 3");
  check_error([&] { upsample_nearest2d(zeros({1, 1, 3, 3}), {2}); },
              "It is expected output_size equals to 2, but got size 1");
  check_error([&] { upsample_linear1d(zeros({1, 1, 3}), {0}, false); },
              "Input and output sizes should be greater than 0, but got input (W: 3) and output (W: 0)");
  check_error([&] { upsample_bilinear2d(zeros({1, 1, 2, 2}, kLong), {3, 3}, false); },
              "\"upsample_bilinear2d\" not implemented for 'Long'");
}
