// Pooling (core/ops/pooling.cpp): max / avg / adaptive pooling against plain loops written
// here and PyTorch 1.13 numbers (tests/core/fixtures/make_resample_values.py), output sizes
// under ceil_mode / padding / dilation, NaN and tie rules, unbatched and empty-batch inputs,
// float64 gradcheck (also non-contiguous), gradgradcheck, node names and error texts.
#include <cmath>
#include <limits>

#include "ember/core/ops/pooling.h"
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// Output length by the documented formula, with floating floor/ceil (independent of ember's).
int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  double v = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t o = static_cast<int64_t>(ceil_mode ? std::ceil(v) : std::floor(v)) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;  // the last window starts inside the image
  return o;
}

struct Cfg {
  int64_t kH, kW, sH, sW, pH, pW, dH, dW;
  bool ceil;
};

/// Plain max pooling of a (P, H, W)-viewed tensor: values and flat argmax (first max wins).
std::pair<std::vector<double>, std::vector<double>> max_pool_ref(const Tensor& x, const Cfg& c) {
  const int64_t H = x.size(-2), W = x.size(-1);
  const int64_t oH = out_len(H, c.kH, c.sH, c.pH, c.dH, c.ceil), oW = out_len(W, c.kW, c.sW, c.pW, c.dW, c.ceil);
  std::vector<double> v = values(x), out, idx;
  for (int64_t p = 0; p < x.numel() / (H * W); ++p)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) {
        double best = -kInf;
        int64_t at = -1;
        for (int64_t i = 0; i < c.kH; ++i)
          for (int64_t j = 0; j < c.kW; ++j) {
            int64_t h = oh * c.sH - c.pH + i * c.dH, w = ow * c.sW - c.pW + j * c.dW;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            double e = v[p * H * W + h * W + w];
            if (at < 0 || e > best) best = e, at = h * W + w;
          }
        out.push_back(best);
        idx.push_back(static_cast<double>(at));
      }
  return {out, idx};
}

/// Plain average pooling, PyTorch's divisor rules.
std::vector<double> avg_pool_ref(const Tensor& x, const Cfg& c, bool include_pad, std::optional<int64_t> div) {
  const int64_t H = x.size(-2), W = x.size(-1);
  const int64_t oH = out_len(H, c.kH, c.sH, c.pH, 1, c.ceil), oW = out_len(W, c.kW, c.sW, c.pW, 1, c.ceil);
  std::vector<double> v = values(x), out;
  for (int64_t p = 0; p < x.numel() / (H * W); ++p)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) {
        int64_t hs = oh * c.sH - c.pH, ws = ow * c.sW - c.pW;
        int64_t he = std::min(hs + c.kH, H + c.pH), we = std::min(ws + c.kW, W + c.pW);
        int64_t pool = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0), ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H), we = std::min(we, W);
        double sum = 0;
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w) sum += v[p * H * W + h * W + w];
        double d = div ? static_cast<double>(*div) : include_pad ? pool : (he - hs) * (we - ws);
        out.push_back(he > hs && we > ws ? sum / d : 0.0);
      }
  return out;
}

/// Plain adaptive pooling (average or max) to (oH, oW).
std::vector<double> adaptive_ref(const Tensor& x, int64_t oH, int64_t oW, bool average) {
  const int64_t H = x.size(-2), W = x.size(-1);
  std::vector<double> v = values(x), out;
  for (int64_t p = 0; p < x.numel() / (H * W); ++p)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) {
        auto hs = (int64_t)std::floor(double(oh * H) / oH), he = (int64_t)std::ceil(double((oh + 1) * H) / oH);
        auto ws = (int64_t)std::floor(double(ow * W) / oW), we = (int64_t)std::ceil(double((ow + 1) * W) / oW);
        double acc = average ? 0.0 : -kInf;
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w) {
            double e = v[p * H * W + h * W + w];
            acc = average ? acc + e : std::max(acc, e);
          }
        out.push_back(average ? acc / double((he - hs) * (we - ws)) : acc);
      }
  return out;
}

Tensor noncontiguous_leaf(IntArrayRef s) {
  // A (N, C, W, H) tensor transposed to (N, C, H, W): strided in both pooled dims.
  Tensor t = test::rand_leaf({s[0], s[1], s[3], s[2]}).detach().transpose(2, 3).requires_grad_(true);
  REQUIRE(!t.is_contiguous());
  return t;
}

const std::vector<Cfg> kConfigs = {
    {2, 2, 2, 2, 0, 0, 1, 1, false},  // the classic 2x2 / 2
    {3, 3, 2, 2, 1, 1, 1, 1, false},  // overlapping windows with padding
    {3, 2, 2, 3, 1, 1, 1, 2, true},   // rectangular, dilated, ceil_mode
    {2, 3, 1, 2, 1, 0, 2, 1, true},
    {3, 3, 3, 3, 1, 1, 1, 1, true},   // ceil_mode where the last window would start in the padding
};

}  // namespace

TEST_CASE("max_pool2d: 2x2 windows by hand") {
  // seq 4x4 = [[0..3],[4..7],[8..11],[12..15]]: each 2x2 block's max is its bottom-right.
  auto [out, idx] = max_pool2d_with_indices(seq({1, 1, 4, 4}), 2);
  CHECK(shape(out) == std::vector<int64_t>{1, 1, 2, 2});
  check_close(out, {5, 7, 13, 15});
  CHECK(idx.dtype() == kLong);
  check_close(idx, {5, 7, 13, 15});
}

TEST_CASE("max_pool2d: matches a plain loop over kernel, stride, padding, dilation, ceil_mode") {
  manual_seed(0);
  Tensor x = rand({2, 3, 7, 8}, kDouble);
  for (const Cfg& c : kConfigs) {
    auto [out, idx] = max_pool2d_with_indices(x, {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, {c.dH, c.dW}, c.ceil);
    auto [ref, ref_idx] = max_pool_ref(x, c);
    CHECK(shape(out) == std::vector<int64_t>{2, 3, out_len(7, c.kH, c.sH, c.pH, c.dH, c.ceil),
                                             out_len(8, c.kW, c.sW, c.pW, c.dW, c.ceil)});
    check_close(out, ref);
    check_close(idx, ref_idx);
    // float32 computes the same maxima.
    check_close(max_pool2d(x.to(kFloat), {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, {c.dH, c.dW}, c.ceil), ref);
  }
}

TEST_CASE("max_pool2d: PyTorch numbers and output sizes") {
  // F.max_pool2d(seq(1,1,5,6), (3,2), (2,3), (1,1), (1,2), ceil_mode=True)
  auto [out, idx] = max_pool2d_with_indices(seq({1, 1, 5, 6}), {3, 2}, {2, 3}, {1, 1}, {1, 2}, true);
  check_close(out, {7, 10, 11, 19, 22, 23, 25, 28, 29});
  check_close(idx, {7, 10, 11, 19, 22, 23, 25, 28, 29});
  // 5 with k=3, s=3, p=1, ceil: ceil((5 + 2 - 3) / 3) + 1 = 3, but window 2 would start at
  // 6 - 1 = 5, past the input, so PyTorch gives 2 (torch.Size([1, 2, 2])).
  CHECK(shape(max_pool2d(seq({1, 5, 5}), 3, 3, 1, 1, true)) == std::vector<int64_t>{1, 2, 2});
  CHECK(shape(max_pool2d(seq({1, 5, 5}), 3, 3, 1, 1, false)) == std::vector<int64_t>{1, 2, 2});
  CHECK(shape(max_pool2d(seq({1, 5, 5}), 2, 2, 0, 1, true)) == std::vector<int64_t>{1, 3, 3});
  CHECK(shape(max_pool2d(seq({1, 5, 5}), 2, 2, 0, 1, false)) == std::vector<int64_t>{1, 2, 2});
  CHECK(pooling_output_shape(28, 2, 0, 2, 1, false) == 14);
  CHECK(pooling_output_shape(7, 3, 1, 2, 2, true) == 3);
}

TEST_CASE("max_pool2d: NaN propagates, ties keep the first position, -inf is a value") {
  Tensor x = from_values({1, kNan, 3, 2, 5, 5, 5, 5, -kInf, -kInf, -kInf, -kInf}, {3, 1, 4});
  auto [out, idx] = max_pool2d_with_indices(x.view({3, 2, 2}), 2);
  check_close(out, {kNan, 5, -kInf});
  check_close(idx, {1, 0, 0});
}

TEST_CASE("max_pool2d: unbatched, empty batch, 1-d forms") {
  Tensor x = seq({2, 4, 4});
  check_close(max_pool2d(x, 2), max_pool2d(x.unsqueeze(0), 2).squeeze(0));
  Tensor empty = zeros({0, 2, 4, 4}, kDouble);
  CHECK(shape(max_pool2d(empty, 2)) == std::vector<int64_t>{0, 2, 2, 2});
  // max_pool1d over L = 5 with k=2, s=2, p=1: windows [-1,0], [1,2], [3,4].
  auto [v, i] = max_pool1d_with_indices(from_values({3, 1, 4, 1, 5}, {1, 5}), 2, 2, 1);
  check_close(v, {3, 4, 5});
  check_close(i, {0, 2, 4});
  CHECK(shape(max_pool1d(seq({2, 3, 5}), 3, 1)) == std::vector<int64_t>{2, 3, 3});
}

TEST_CASE("max_pool2d: gradients (gradcheck, non-contiguous, gradgradcheck)") {
  manual_seed(1);
  for (const Cfg& c : kConfigs) {
    auto fn = [c](const TensorList& in) {
      return max_pool2d(in[0], {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, {c.dH, c.dW}, c.ceil);
    };
    check_grad(fn, {test::rand_leaf({2, 2, 6, 7})});
    check_grad(fn, {noncontiguous_leaf({1, 2, 6, 7})});
  }
  // Overlapping windows share maxima: their gradients add up at the argmax.
  Tensor x = from_values({1, 2, 3, 4, 9, 5, 6, 7, 8}, {1, 3, 3}).requires_grad_(true);
  max_pool2d(x, 2, 1).sum().backward();
  check_close(x.grad(), {0, 0, 0, 0, 4, 0, 0, 0, 0});
  CHECK(max_pool2d(x, 2, 1).grad_fn()->name() == "MaxPool2DWithIndicesBackward0");
  check_gradgrad([](const TensorList& in) { return max_pool2d(in[0], 3, 2, 1); }, {test::rand_leaf({1, 2, 5, 5})});
  check_grad([](const TensorList& in) { return max_pool1d(in[0], 3, 2, 1); }, {test::rand_leaf({2, 3, 8})});
}

TEST_CASE("avg_pool2d: PyTorch numbers, plain loop, divisor rules") {
  // Windows of seq 5x5 with k=2, s=2, p=1, ceil_mode: the corner window covers only x[0,0].
  check_close(avg_pool2d(seq({1, 1, 5, 5}), 2, 2, 1, true), {0, 0.75, 1.75, 3.75, 9, 11, 8.75, 19, 21});
  check_close(avg_pool2d(seq({1, 1, 5, 5}), 2, 2, 1, true, false), {0, 1.5, 3.5, 7.5, 9, 11, 17.5, 19, 21});
  check_close(avg_pool2d(seq({1, 1, 4, 4}), 3, 1, 1, false, true, 2),
              {5, 9, 12, 9, 13.5, 22.5, 27, 19.5, 25.5, 40.5, 45, 31.5, 21, 33, 36, 25});
  manual_seed(2);
  Tensor x = rand({2, 3, 7, 8}, kDouble);
  for (const Cfg& c : kConfigs) {
    if (c.dH != 1 || c.dW != 1) continue;
    for (bool include : {true, false}) {
      Tensor out = avg_pool2d(x, {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, c.ceil, include);
      check_close(out, avg_pool_ref(x, c, include, std::nullopt));
      check_close(avg_pool2d(x.to(kFloat), {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, c.ceil, include),
                  avg_pool_ref(x, c, include, std::nullopt), 1e-5);
    }
    check_close(avg_pool2d(x, {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, c.ceil, true, 3),
                avg_pool_ref(x, c, true, 3));
  }
  // Unbatched and 1-d.
  check_close(avg_pool2d(seq({2, 4, 4}), 2), avg_pool2d(seq({1, 2, 4, 4}), 2).squeeze(0));
  check_close(avg_pool1d(from_values({1, 2, 3, 4, 5}, {1, 1, 5}), 2, 2, 1, false, false), {1, 2.5, 4.5});
}

TEST_CASE("avg_pool2d: gradients") {
  manual_seed(3);
  for (const Cfg& c : kConfigs) {
    if (c.dH != 1 || c.dW != 1) continue;
    for (bool include : {true, false}) {
      auto fn = [c, include](const TensorList& in) {
        return avg_pool2d(in[0], {c.kH, c.kW}, {c.sH, c.sW}, {c.pH, c.pW}, c.ceil, include);
      };
      check_grad(fn, {test::rand_leaf({2, 2, 6, 7})});
      check_grad(fn, {noncontiguous_leaf({1, 2, 6, 7})});
    }
  }
  // d/dx of the mean of a 2x2 window is 1/4 for each of its four inputs.
  Tensor x = seq({1, 2, 2}).requires_grad_(true);
  avg_pool2d(x, 2).sum().backward();
  check_close(x.grad(), {0.25, 0.25, 0.25, 0.25});
  CHECK(avg_pool2d(x, 2).grad_fn()->name() == "AvgPool2DBackward0");
  auto fn = [](const TensorList& in) { return avg_pool2d(in[0], 3, 2, 1, true, false, std::nullopt); };
  check_gradgrad(fn, {test::rand_leaf({1, 2, 5, 6})});
}

TEST_CASE("adaptive_avg_pool2d / adaptive_max_pool2d") {
  // 5 -> 3 windows [0,2), [1,4), [3,5); 7 -> 4 windows [0,2), [1,4), [3,6), [5,7).
  check_close(adaptive_avg_pool2d(seq({1, 5, 7}), {3, 4}), {4, 5.5, 7.5, 9, 14.5, 16, 18, 19.5, 25, 26.5, 28.5, 30});
  auto [v, i] = adaptive_max_pool2d(seq({1, 5, 7}), {3, 4});
  check_close(v, {8, 10, 12, 13, 22, 24, 26, 27, 29, 31, 33, 34});
  check_close(i, {8, 10, 12, 13, 22, 24, 26, 27, 29, 31, 33, 34});
  manual_seed(4);
  Tensor x = rand({2, 3, 7, 9}, kDouble);
  for (auto [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 4}, {7, 9}, {10, 4}, {2, 5}}) {
    check_close(adaptive_avg_pool2d(x, {oh, ow}), adaptive_ref(x, oh, ow, true));
    check_close(std::get<0>(adaptive_max_pool2d(x, {oh, ow})), adaptive_ref(x, oh, ow, false));
  }
  // Global average pooling is the mean over H and W; output size 0 gives an empty result.
  check_close(adaptive_avg_pool2d(x, {1, 1}).flatten(), x.mean({2, 3}).flatten());
  CHECK(shape(adaptive_avg_pool2d(x, {0, 3})) == std::vector<int64_t>{2, 3, 0, 3});
  CHECK(shape(adaptive_avg_pool2d(zeros({0, 3, 4, 4}, kDouble), {2, 2})) == std::vector<int64_t>{0, 3, 2, 2});
  check_close(adaptive_avg_pool1d(from_values({1, 2, 3, 4, 5}, {1, 5}), 2), {2, 4});
  check_close(std::get<0>(adaptive_max_pool1d(from_values({1, 7, 3, 4, 5}, {1, 5}), 2)), {7, 5});
}

TEST_CASE("adaptive pooling: gradients") {
  manual_seed(5);
  auto avg = [](const TensorList& in) { return adaptive_avg_pool2d(in[0], {3, 2}); };
  auto mx = [](const TensorList& in) { return std::get<0>(adaptive_max_pool2d(in[0], {3, 2})); };
  check_grad(avg, {test::rand_leaf({2, 2, 5, 7})});
  check_grad(avg, {noncontiguous_leaf({1, 2, 5, 7})});
  check_grad(mx, {test::rand_leaf({2, 2, 5, 7})});
  check_grad(mx, {noncontiguous_leaf({1, 2, 5, 7})});
  check_gradgrad(avg, {test::rand_leaf({1, 2, 5, 4})});
  check_gradgrad(mx, {test::rand_leaf({1, 2, 5, 4})});
  Tensor x = test::rand_leaf({1, 4, 4});
  CHECK(adaptive_avg_pool2d(x, {2, 2}).grad_fn()->name() == "AdaptiveAvgPool2DBackward0");
  CHECK(std::get<0>(adaptive_max_pool2d(x, {2, 2})).grad_fn()->name() == "AdaptiveMaxPool2DBackward0");
}

TEST_CASE("pooling: error texts") {
  Tensor x = zeros({1, 1, 3, 3});
  check_error([&] { max_pool2d(x, 3, {}, 2); },
              "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1");
  check_error([&] { max_pool2d(zeros({3, 3}), 2); }, "non-empty 3D or 4D (batch mode) tensor expected for input");
  check_error([&] { max_pool2d(zeros({1, 2, 2}), 3); },
              "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small");
  check_error([&] { max_pool2d(zeros({1, 2, 2}), 2, {}, -1); }, "pad must be non-negative, but got pad: -1");
  check_error([&] { max_pool2d(zeros({1, 2, 2}), 2, 0); }, "stride should not be zero");
  check_error([&] { max_pool2d(zeros({1, 4, 4}), 2, {}, 0, 0); },
              "dilation should be greater than zero, but got dilationH: 0 dilationW: 0");
  check_error([&] { max_pool2d(zeros({0, 4, 4}), 2); },
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[0, 4, 4]");
  check_error([&] { max_pool2d(zeros({1, 4, 4}), {2, 2, 2}); },
              "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  check_error([&] { max_pool1d(zeros({4}), 2); },
              "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[4]");
  check_error([&] { max_pool1d(zeros({1, 1, 4}), 2, {}, 2); },
              "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2");
  check_error([&] { avg_pool2d(zeros({1, 2, 2}), 3); },
              "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small");
  check_error([&] { avg_pool2d(zeros({1, 3, 3}), 2, {}, 0, false, true, 0); }, "divisor must be not zero");
  check_error([&] { avg_pool2d(zeros({1, 3, 3}), 3, {}, 2); }, "pad should be at most half of effective kernel size");
  check_error([&] { adaptive_avg_pool2d(zeros({3, 3}), {2, 2}); },
              "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [3, 3]");
  check_error([&] { adaptive_avg_pool2d(zeros({1, 0, 3}), {2, 2}); },
              "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has "
              "sizes [1, 0, 3] with dimension 1 being empty");
  check_error([&] { adaptive_avg_pool2d(zeros({1, 3, 3}), {-1, 2}); },
              "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, 2}");
  check_error([&] { adaptive_max_pool2d(zeros({3, 3}), {2, 2}); },
              "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [3, 3]");
  check_error([&] { adaptive_max_pool2d(zeros({1, 0, 3}), {2, 2}); }, "with dimension 1 being empty");
}

TEST_CASE("pooling: dtypes") {
  manual_seed(6);
  Tensor x = rand({2, 3, 6, 6}, kDouble);
  for (ScalarType t : {kHalf, kBFloat16}) {
    Tensor xt = x.to(t);
    // Compare with the double result on the rounded input: maxima are exact, means close.
    CHECK(max_pool2d(xt, 2).dtype() == t);
    check_close(max_pool2d(xt, 2), max_pool2d(xt.to(kDouble), 2));
    check_close(avg_pool2d(xt, 3, 1, 1), avg_pool2d(xt.to(kDouble), 3, 1, 1), 2e-2, 2e-2);
    check_close(adaptive_avg_pool2d(xt, {2, 3}), adaptive_avg_pool2d(xt.to(kDouble), {2, 3}), 2e-2, 2e-2);
  }
  // Integer tensors: max pooling, and average pooling with integer division as PyTorch's.
  Tensor i = ember::tensor(std::vector<int64_t>{1, 2, 3, 5, -7, 8, 9, 10}).view({2, 2, 2});
  CHECK(values(max_pool2d(i, 2)) == std::vector<double>{5, 10});
  CHECK(max_pool2d(i, 2).dtype() == kLong);
  CHECK(values(avg_pool2d(i, 2)) == std::vector<double>{2, 5});  // 11 / 4 = 2, 20 / 4 = 5
}
