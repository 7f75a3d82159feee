// The 3-d, unpooling, fractional and LP pooling modules and their F:: forms: values against
// direct loops written here from PyTorch's definitions and against PyTorch's numbers
// (fixtures/pooling3d_numbers.h, written by fixtures/make_pooling3d_numbers.py), float64
// gradcheck, Python's reprs, option defaults and PyTorch's error texts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "ember/nn/functional/pooling.h"
#include "ember/nn/modules/pooling.h"
#include "nn/fixtures/pooling3d_numbers.h"
#include "op_check.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream s;
  s << *m;
  return s.str();
}

/// arange(n).sin() in float64, cast to dtype and shaped (the fixture script's sin_input).
Tensor sin_input(IntArrayRef shape, ScalarType dtype = kDouble) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return arange(n, kDouble).sin().to(dtype).reshape(shape);
}

struct Box {
  int64_t k[3], s[3], p[3], d[3];
};

/// Output length of one axis (floor, or ceil with the last window starting in the input or
/// its left padding).
int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

/// Max over each box of x (N, C, D, H, W) in float64, first maximum in (d, h, w) order, and
/// its flat index in the volume.
std::pair<Tensor, Tensor> direct_max_pool3d(const Tensor& x_, const Box& b, bool ceil_mode) {
  Tensor x = x_.detach().to(kDouble).contiguous();
  const int64_t planes = x.size(0) * x.size(1), in[3] = {x.size(2), x.size(3), x.size(4)};
  int64_t out[3];
  for (int i = 0; i < 3; ++i) out[i] = out_len(in[i], b.k[i], b.s[i], b.p[i], b.d[i], ceil_mode);
  Tensor v = zeros({x.size(0), x.size(1), out[0], out[1], out[2]}, kDouble);
  Tensor ix = zeros({x.size(0), x.size(1), out[0], out[1], out[2]}, kLong);
  const double* xp = x.data_ptr<double>();
  double* vp = v.data_ptr<double>();
  int64_t* ip = ix.data_ptr<int64_t>();
  const int64_t vol = in[0] * in[1] * in[2];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t c = 0; c < out[1]; ++c)
        for (int64_t e = 0; e < out[2]; ++e) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t at = -1;
          for (int64_t i = 0; i < b.k[0]; ++i)
            for (int64_t j = 0; j < b.k[1]; ++j)
              for (int64_t l = 0; l < b.k[2]; ++l) {
                const int64_t z = a * b.s[0] - b.p[0] + i * b.d[0], h = c * b.s[1] - b.p[1] + j * b.d[1],
                              w = e * b.s[2] - b.p[2] + l * b.d[2];
                if (z < 0 || z >= in[0] || h < 0 || h >= in[1] || w < 0 || w >= in[2]) continue;
                const int64_t flat = (z * in[1] + h) * in[2] + w;
                if (at < 0 || xp[p * vol + flat] > best) best = xp[p * vol + flat], at = flat;
              }
          const int64_t o = ((p * out[0] + a) * out[1] + c) * out[2] + e;
          vp[o] = best;
          ip[o] = at;
        }
  return {v, ix};
}

/// PyTorch's avg_pool3d: window [o s - p, min(o s - p + k, in + p)) per axis; the divisor is
/// the override, the product of those lengths (count_include_pad) or of their parts inside
/// the input.
Tensor direct_avg_pool3d(const Tensor& x_, const Box& b, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor) {
  Tensor x = x_.detach().to(kDouble).contiguous();
  const int64_t planes = x.size(0) * x.size(1), in[3] = {x.size(2), x.size(3), x.size(4)};
  int64_t out[3];
  for (int i = 0; i < 3; ++i) out[i] = out_len(in[i], b.k[i], b.s[i], b.p[i], 1, ceil_mode);
  Tensor y = zeros({x.size(0), x.size(1), out[0], out[1], out[2]}, kDouble);
  const double* xp = x.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  const int64_t vol = in[0] * in[1] * in[2];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t c = 0; c < out[1]; ++c)
        for (int64_t e = 0; e < out[2]; ++e) {
          const int64_t o3[3] = {a, c, e};
          int64_t lo[3], hi[3], pool = 1, inside = 1;
          for (int i = 0; i < 3; ++i) {
            lo[i] = o3[i] * b.s[i] - b.p[i];
            hi[i] = std::min(lo[i] + b.k[i], in[i] + b.p[i]);
            pool *= hi[i] - lo[i];
            lo[i] = std::max<int64_t>(lo[i], 0);
            hi[i] = std::min(hi[i], in[i]);
            inside *= hi[i] - lo[i];
          }
          double sum = 0;
          for (int64_t z = lo[0]; z < hi[0]; ++z)
            for (int64_t h = lo[1]; h < hi[1]; ++h)
              for (int64_t w = lo[2]; w < hi[2]; ++w) sum += xp[p * vol + (z * in[1] + h) * in[2] + w];
          const double div = divisor ? static_cast<double>(*divisor) : count_include_pad ? pool : inside;
          yp[((p * out[0] + a) * out[1] + c) * out[2] + e] = sum / div;
        }
  return y;
}

/// Adaptive 3-d pooling: output o covers [floor(o in / out), ceil((o + 1) in / out)).
std::pair<Tensor, Tensor> direct_adaptive3d(const Tensor& x_, IntArrayRef out, bool average) {
  Tensor x = x_.detach().to(kDouble).contiguous();
  const int64_t planes = x.size(0) * x.size(1), in[3] = {x.size(2), x.size(3), x.size(4)};
  Tensor y = zeros({x.size(0), x.size(1), out[0], out[1], out[2]}, kDouble);
  Tensor ix = zeros({x.size(0), x.size(1), out[0], out[1], out[2]}, kLong);
  const double* xp = x.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  int64_t* ip = ix.data_ptr<int64_t>();
  const int64_t vol = in[0] * in[1] * in[2];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t c = 0; c < out[1]; ++c)
        for (int64_t e = 0; e < out[2]; ++e) {
          const int64_t o3[3] = {a, c, e};
          int64_t lo[3], hi[3];
          for (int i = 0; i < 3; ++i) {
            lo[i] = o3[i] * in[i] / out[i];
            hi[i] = ((o3[i] + 1) * in[i] + out[i] - 1) / out[i];
          }
          double sum = 0, best = -std::numeric_limits<double>::infinity();
          int64_t at = -1, count = 0;
          for (int64_t z = lo[0]; z < hi[0]; ++z)
            for (int64_t h = lo[1]; h < hi[1]; ++h)
              for (int64_t w = lo[2]; w < hi[2]; ++w) {
                const int64_t flat = (z * in[1] + h) * in[2] + w;
                const double v = xp[p * vol + flat];
                sum += v;
                ++count;
                if (at < 0 || v > best) best = v, at = flat;
              }
          const int64_t o = ((p * out[0] + a) * out[1] + c) * out[2] + e;
          yp[o] = average ? sum / static_cast<double>(count) : best;
          ip[o] = at;
        }
  return {y, ix};
}

F::MaxPool3dFuncOptions max_options(const Box& b, bool ceil_mode) {
  return F::MaxPool3dFuncOptions({b.k[0], b.k[1], b.k[2]})
      .stride({b.s[0], b.s[1], b.s[2]})
      .padding({b.p[0], b.p[1], b.p[2]})
      .dilation({b.d[0], b.d[1], b.d[2]})
      .ceil_mode(ceil_mode);
}

F::AvgPool3dFuncOptions avg_options(const Box& b, bool ceil_mode, bool cip, std::optional<int64_t> divisor) {
  return F::AvgPool3dFuncOptions({b.k[0], b.k[1], b.k[2]})
      .stride({b.s[0], b.s[1], b.s[2]})
      .padding({b.p[0], b.p[1], b.p[2]})
      .ceil_mode(ceil_mode)
      .count_include_pad(cip)
      .divisor_override(divisor);
}

Tensor doubles(const std::vector<double>& v, IntArrayRef shape) { return from_values(v, shape, kDouble); }
Tensor indices_of(const std::vector<double>& v, IntArrayRef shape) {
  return from_values(v, shape, kDouble).to(kLong);
}

}  // namespace

TEST_CASE("test_pooling3d_modules: max_pool3d and avg_pool3d equal the direct loops") {
  manual_seed(0);
  const std::vector<Box> boxes = {
      {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}},
      {{3, 2, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}},
      {{2, 3, 2}, {2, 1, 3}, {1, 0, 1}, {2, 1, 2}},
      {{1, 3, 2}, {1, 2, 1}, {0, 1, 0}, {1, 2, 1}},
  };
  Tensor x = randn({2, 3, 7, 6, 8}, kDouble);
  for (const Box& b : boxes) {
    for (bool ceil_mode : {false, true}) {
      auto [v, i] = F::max_pool3d_with_indices(x, max_options(b, ceil_mode));
      auto [rv, ri] = direct_max_pool3d(x, b, ceil_mode);
      check_close(v, rv, 0, 0);
      CHECK(equal(i, ri));
      check_close(F::max_pool3d(x, max_options(b, ceil_mode)), rv, 0, 0);
      Box a = b;
      a.d[0] = a.d[1] = a.d[2] = 1;
      for (bool cip : {true, false}) {
        check_close(F::avg_pool3d(x, avg_options(a, ceil_mode, cip, std::nullopt)),
                    direct_avg_pool3d(x, a, ceil_mode, cip, std::nullopt), 1e-12, 1e-12);
      }
      check_close(F::avg_pool3d(x, avg_options(a, ceil_mode, true, 7)),
                  direct_avg_pool3d(x, a, ceil_mode, true, 7), 1e-12, 1e-12);
    }
  }
  // Unbatched (C, D, H, W), and float32.
  Box b{{2, 2, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 1}};
  Tensor u = randn({3, 4, 5, 4});
  auto [v, i] = F::max_pool3d_with_indices(u, max_options(b, false));
  auto [rv, ri] = direct_max_pool3d(u.unsqueeze(0), b, false);
  CHECK(v.dtype() == kFloat);
  check_close(v, rv.squeeze(0), 0, 0);
  CHECK(equal(i, ri.squeeze(0)));
  check_close(F::avg_pool3d(u, avg_options(b, false, true, std::nullopt)),
              direct_avg_pool3d(u.unsqueeze(0), b, false, true, std::nullopt).squeeze(0), 1e-6, 1e-6);
  // An empty batch is allowed (as in PyTorch).
  Tensor e = randn({0, 2, 4, 4, 4});
  CHECK(shape(F::max_pool3d(e, F::MaxPool3dFuncOptions(2))) == std::vector<int64_t>{0, 2, 2, 2, 2});
  CHECK(shape(F::avg_pool3d(e, F::AvgPool3dFuncOptions(2))) == std::vector<int64_t>{0, 2, 2, 2, 2});
  CHECK(shape(F::adaptive_max_pool3d(e, F::AdaptiveMaxPool3dFuncOptions(3))) == std::vector<int64_t>{0, 2, 3, 3, 3});
}

TEST_CASE("test_pooling3d_modules: adaptive 3-d pooling equals the direct loops") {
  manual_seed(1);
  Tensor x = randn({2, 2, 7, 5, 6}, kDouble);
  for (std::vector<int64_t> out :
       {std::vector<int64_t>{3, 2, 4}, {7, 5, 6}, {1, 1, 1}, {4, 3, 5}, {10, 7, 9}}) {
    auto [ra, ignored] = direct_adaptive3d(x, out, true);
    check_close(F::adaptive_avg_pool3d(x, F::AdaptiveAvgPool3dFuncOptions(out)), ra, 1e-12, 1e-12);
    auto [rm, ri] = direct_adaptive3d(x, out, false);
    auto [v, i] = F::adaptive_max_pool3d_with_indices(x, F::AdaptiveMaxPool3dFuncOptions(out));
    check_close(v, rm, 0, 0);
    CHECK(equal(i, ri));
  }
  // None keeps the input's size; unbatched input.
  Tensor u = randn({2, 4, 5, 3}, kDouble);
  Tensor y = F::adaptive_avg_pool3d(u, F::AdaptiveAvgPool3dFuncOptions({2, std::nullopt, 1}));
  CHECK(shape(y) == std::vector<int64_t>{2, 2, 5, 1});
  check_close(y, direct_adaptive3d(u.unsqueeze(0), {2, 5, 1}, true).first.squeeze(0), 1e-12, 1e-12);
  // A zero output size gives an empty result, as PyTorch's.
  CHECK(shape(F::adaptive_max_pool3d(x, F::AdaptiveMaxPool3dFuncOptions({2, 0, 2}))) ==
        std::vector<int64_t>{2, 2, 2, 0, 2});
  // AdaptiveMaxPool1d's functional form: output o covers [floor(o L / O), ceil((o + 1) L / O)),
  // here [0, 3), [2, 5), [4, 7).
  Tensor l = from_values({3, 1, 4, 1, 5, 9, 2}, {1, 1, 7});
  auto [lv, li] = F::adaptive_max_pool1d_with_indices(l, F::AdaptiveMaxPool1dFuncOptions(3));
  check_close(lv, {4, 5, 9});
  CHECK(equal(li, longs({2, 4, 5}).view({1, 1, 3})));
}

TEST_CASE("test_pooling3d_modules: 3-d pooling against PyTorch's numbers") {
  Tensor x = sin_input({1, 2, 4, 5, 4});
  auto [v, i] = F::max_pool3d_with_indices(
      x,
      F::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 2, 1}).padding({1, 1, 0}).dilation({1, 1, 2}).ceil_mode(
          true));
  check_close(v, doubles(kMaxPool3dValues, {1, 2, 3, 3, 2}), 0, 0);
  CHECK(equal(i, indices_of(kMaxPool3dIndices, {1, 2, 3, 3, 2})));
  check_close(F::avg_pool3d(x, F::AvgPool3dFuncOptions({2, 3, 2})
                                   .stride({2, 2, 1})
                                   .padding({1, 1, 1})
                                   .ceil_mode(true)
                                   .count_include_pad(false)),
              doubles(kAvgPool3d, {1, 2, 3, 3, 5}), 1e-12, 1e-12);
  check_close(F::avg_pool3d(x, F::AvgPool3dFuncOptions(2).stride({1, 2, 2}).padding(1).divisor_override(5)),
              doubles(kAvgPool3dDivisor5, {1, 2, 5, 3, 3}), 1e-12, 1e-12);
  Tensor xa = sin_input({1, 1, 5, 4, 3});
  check_close(F::adaptive_avg_pool3d(xa, F::AdaptiveAvgPool3dFuncOptions({3, 2, 2})),
              doubles(kAdaptiveAvgPool3d, {1, 1, 3, 2, 2}), 1e-12, 1e-12);
  auto [av, ai] = F::adaptive_max_pool3d_with_indices(xa, F::AdaptiveMaxPool3dFuncOptions({3, 3, 2}));
  check_close(av, doubles(kAdaptiveMaxPool3dValues, {1, 1, 3, 3, 2}), 0, 0);
  CHECK(equal(ai, indices_of(kAdaptiveMaxPool3dIndices, {1, 1, 3, 3, 2})));
}

TEST_CASE("test_pooling3d_modules: fractional max pooling with given samples is PyTorch's") {
  // float32: samples [n][c] = (width's, height's).
  Tensor xf = sin_input({2, 2, 7, 6}, kFloat);
  Tensor samples = from_values({0.2, 0.7, 0.9, 0.1, 0.5, 0.5, 0.05, 0.95}, {2, 2, 2}, kFloat);
  auto [v, i] = F::fractional_max_pool2d_with_indices(xf, F::FractionalMaxPool2dFuncOptions({2, 3})
                                                              .output_size(ExpandingArray<2>({4, 3}))
                                                              ._random_samples(samples));
  check_close(v, doubles(kFractional2dFloatValues, {2, 2, 4, 3}), 1e-6, 1e-6);
  CHECK(equal(i, indices_of(kFractional2dFloatIndices, {2, 2, 4, 3})));
  // float64 with output_ratio: 9 * 0.5 -> 4, 8 * 0.5 -> 4.
  Tensor xd = sin_input({1, 1, 9, 8});
  auto [dv, di] = F::fractional_max_pool2d_with_indices(
      xd, F::FractionalMaxPool2dFuncOptions(2)
              .output_ratio(ExpandingArray<2, double>(0.5))
              ._random_samples(from_values({0.3, 0.8}, {1, 1, 2}, kDouble)));
  check_close(dv, doubles(kFractional2dDoubleValues, {1, 1, 4, 4}), 0, 0);
  CHECK(equal(di, indices_of(kFractional2dDoubleIndices, {1, 1, 4, 4})));
  // 3-d: samples [n][c] = (depth's, height's, width's).
  Tensor x3 = sin_input({1, 2, 6, 7, 5}, kFloat);
  Tensor samples3 = from_values({0.15, 0.6, 0.85, 0.7, 0.25, 0.4}, {1, 2, 3}, kFloat);
  auto [v3, i3] = F::fractional_max_pool3d_with_indices(x3, F::FractionalMaxPool3dFuncOptions({2, 2, 3})
                                                                .output_size(ExpandingArray<3>({3, 4, 2}))
                                                                ._random_samples(samples3));
  check_close(v3, doubles(kFractional3dValues, {1, 2, 3, 4, 2}), 1e-6, 1e-6);
  CHECK(equal(i3, indices_of(kFractional3dIndices, {1, 2, 3, 4, 2})));
  // Unbatched input uses samples[0].
  auto [uv, ui] = F::fractional_max_pool3d_with_indices(x3[0], F::FractionalMaxPool3dFuncOptions({2, 2, 3})
                                                                   .output_size(ExpandingArray<3>({3, 4, 2}))
                                                                   ._random_samples(samples3));
  CHECK(equal(ui, i3[0]));
  // Without samples: drawn per call; the output has the requested size and every value is
  // the input at its index.
  manual_seed(5);
  Tensor r = randn({2, 3, 9, 10});
  auto [rv, ri] =
      F::fractional_max_pool2d_with_indices(r, F::FractionalMaxPool2dFuncOptions(3).output_size(4));
  CHECK(shape(rv) == std::vector<int64_t>{2, 3, 4, 4});
  check_close(rv, gather(r.reshape({2, 3, 90}), 2, ri.reshape({2, 3, 16})).view({2, 3, 4, 4}), 0, 0);
}

TEST_CASE("test_pooling3d_modules: LP pooling") {
  // PyTorch's numbers (fixture script): lp_pool1d(x, 2, 3, stride=2), lp_pool2d(x + 1, 3,
  // (2, 3), ceil_mode=True).
  check_close(F::lp_pool1d(sin_input({1, 2, 7}), F::LPPool1dFuncOptions(2, 3).stride(2)),
              doubles(kLpPool1d, {1, 2, 3}), 1e-12, 1e-12);
  check_close(F::lp_pool2d(sin_input({1, 1, 5, 6}) + 1.0, F::LPPool2dFuncOptions(3, {2, 3}).ceil_mode(true)),
              doubles(kLpPool2d, {1, 1, 3, 2}), 1e-12, 1e-12);
  // By hand: p = 2 over windows of 2 is the Euclidean norm of each pair.
  Tensor x = from_values({3, 4, 6, 8, 5, 12}, {1, 6});
  check_close(F::lp_pool1d(x, F::LPPool1dFuncOptions(2, 2)), {5, 10, 13}, 1e-12, 1e-12);
  check_close(F::lp_pool2d(from_values({1, 2, 2, 4}, {1, 2, 2}), F::LPPool2dFuncOptions(1, 2)), {9}, 1e-12,
              1e-12);
}

TEST_CASE("test_pooling3d_modules: max unpooling scatters into zeros") {
  // Hand-computed: values at flat positions of a 4 x 4 plane.
  Tensor x = from_values({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor idx = longs({0, 3, 9, 14}).view({1, 1, 2, 2});
  std::vector<double> expect(16, 0.0);
  expect[0] = 1, expect[3] = 2, expect[9] = 3, expect[14] = 4;
  check_close(F::max_unpool2d(x, idx, F::MaxUnpool2dFuncOptions(2)), expect);
  CHECK(shape(F::max_unpool2d(x, idx, F::MaxUnpool2dFuncOptions(2))) == std::vector<int64_t>{1, 1, 4, 4});
  // 1-d: default length (3 - 1) * 2 + 2 = 6; output_size within stride of that.
  Tensor x1 = from_values({5, 6, 7}, {1, 1, 3});
  Tensor i1 = longs({1, 2, 5}).view({1, 1, 3});
  check_close(F::max_unpool1d(x1, i1, F::MaxUnpool1dFuncOptions(2)), {0, 5, 6, 0, 0, 7});
  check_close(F::max_unpool1d(x1, i1, F::MaxUnpool1dFuncOptions(2).output_size(std::vector<int64_t>{7})),
              {0, 5, 6, 0, 0, 7, 0});
  check_close(F::max_unpool1d(x1[0], i1[0], F::MaxUnpool1dFuncOptions(2)), {0, 5, 6, 0, 0, 7});
  // Round trips: unpooling a max pooling keeps each window's maximum where it was.
  manual_seed(2);
  Tensor v5 = randn({2, 3, 4, 6, 5}, kDouble);
  auto [pv, pi] = F::max_pool3d_with_indices(v5, F::MaxPool3dFuncOptions(2));
  Tensor back =
      F::max_unpool3d(pv, pi, F::MaxUnpool3dFuncOptions(2).output_size(std::vector<int64_t>{4, 6, 5}));
  CHECK(shape(back) == std::vector<int64_t>{2, 3, 4, 6, 5});
  check_close(gather(back.reshape({2, 3, 120}), 2, pi.reshape({2, 3, 12})).view(pv.sizes()), pv, 0, 0);
  check_close(back.sum(), pv.sum(), 1e-12, 1e-12);
  // (in - 1) * stride + kernel - 2 * padding: 2 * 2 + 2 = 6 < 7 -> default differs from the
  // input; output_size may also carry batch and channels.
  Tensor b5 =
      F::max_unpool3d(pv, pi, F::MaxUnpool3dFuncOptions(2).output_size(std::vector<int64_t>{2, 3, 5, 6, 6}));
  CHECK(shape(b5) == std::vector<int64_t>{2, 3, 5, 6, 6});
  // The default size (2 - 1) * 2 + 2 = 4 is too narrow for indices into width 5 (as in PyTorch).
  check_error([&] { F::max_unpool3d(pv, pi, F::MaxUnpool3dFuncOptions(2)); },
              "(output volumes are of size 4x6x4");
}

TEST_CASE("test_pooling3d_modules: float64 gradcheck of the functional forms") {
  manual_seed(3);
  Box b{{2, 2, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 1}};
  check_grad([&](const TensorList& in) { return F::max_pool3d(in[0], max_options(b, true)); },
             {rand_leaf({1, 2, 3, 4, 3})});
  check_grad(
      [&](const TensorList& in) { return F::avg_pool3d(in[0], avg_options(b, true, false, std::nullopt)); },
      {rand_leaf({1, 2, 3, 4, 3})});
  check_grad([&](const TensorList& in) { return F::avg_pool3d(in[0], avg_options(b, false, true, 3)); },
             {rand_leaf({2, 3, 4, 3})});
  check_grad(
      [](const TensorList& in) {
        return F::adaptive_avg_pool3d(in[0], F::AdaptiveAvgPool3dFuncOptions({2, 3, 2}));
      },
      {rand_leaf({1, 2, 3, 4, 5})});
  check_grad(
      [](const TensorList& in) {
        return F::adaptive_max_pool3d(in[0], F::AdaptiveMaxPool3dFuncOptions({2, 3, 2}));
      },
      {rand_leaf({1, 2, 3, 4, 5})});
  check_grad(
      [](const TensorList& in) { return F::adaptive_max_pool1d(in[0], F::AdaptiveMaxPool1dFuncOptions(3)); },
      {rand_leaf({2, 2, 7})});
  check_grad([](const TensorList& in) { return F::lp_pool1d(in[0], F::LPPool1dFuncOptions(2, 3).stride(2)); },
             {rand_leaf({1, 2, 7}, 0.5, 1.5)});
  check_grad(
      [](const TensorList& in) {
        return F::lp_pool2d(in[0], F::LPPool2dFuncOptions(3, {2, 3}));
      },
      {rand_leaf({1, 1, 4, 6}, 0.5, 1.5)});
  // Unpooling: linear in the input.
  Tensor x2 = randn({1, 2, 4, 4}, kDouble);
  auto [v2, i2] = F::max_pool2d_with_indices(x2, F::MaxPool2dFuncOptions(2));
  check_grad([&](const TensorList& in) { return F::max_unpool2d(in[0], i2, F::MaxUnpool2dFuncOptions(2)); },
             {rand_leaf({1, 2, 2, 2})});
  Tensor x1 = randn({1, 2, 6}, kDouble);
  auto [v1, i1] = F::max_pool1d_with_indices(x1, F::MaxPool1dFuncOptions(3));
  check_grad([&](const TensorList& in) { return F::max_unpool1d(in[0], i1, F::MaxUnpool1dFuncOptions(3)); },
             {rand_leaf({1, 2, 2})});
  Tensor x3 = randn({1, 1, 4, 4, 4}, kDouble);
  auto [v3, i3] = F::max_pool3d_with_indices(x3, F::MaxPool3dFuncOptions(2));
  check_grad([&](const TensorList& in) { return F::max_unpool3d(in[0], i3, F::MaxUnpool3dFuncOptions(2)); },
             {rand_leaf({1, 1, 2, 2, 2})});
  // Fractional with fixed samples.
  Tensor s2 = from_values({0.3, 0.6, 0.8, 0.1}, {1, 2, 2}, kDouble);
  check_grad(
      [&](const TensorList& in) {
        return F::fractional_max_pool2d(
            in[0], F::FractionalMaxPool2dFuncOptions(2).output_size(3)._random_samples(s2));
      },
      {rand_leaf({1, 2, 5, 6})});
  Tensor s3 = from_values({0.3, 0.6, 0.8}, {1, 1, 3}, kDouble);
  check_grad(
      [&](const TensorList& in) {
        return F::fractional_max_pool3d(
            in[0], F::FractionalMaxPool3dFuncOptions({2, 2, 2}).output_size(2)._random_samples(s3));
      },
      {rand_leaf({1, 1, 4, 4, 5})});
}

TEST_CASE("test_pooling3d_modules: modules, Python's reprs and option defaults") {
  manual_seed(4);
  Tensor x = randn({2, 3, 6, 6, 6});
  nn::MaxPool3d mp(nn::MaxPool3dOptions(2).stride(2));
  auto [mv, mi] = mp->forward_with_indices(x);
  check_close(mp(x), mv, 0, 0);
  nn::MaxUnpool3d unpool(nn::MaxUnpool3dOptions(2));
  Tensor back = unpool(mv, mi);
  CHECK(shape(back) == std::vector<int64_t>{2, 3, 6, 6, 6});
  check_close(back.sum(), mv.sum(), 1e-3, 1e-5);
  CHECK(shape(unpool(mv, mi, std::vector<int64_t>{7, 7, 7})) == std::vector<int64_t>{2, 3, 7, 7, 7});
  check_close(nn::AvgPool3d(2)(x), F::avg_pool3d(x, F::AvgPool3dFuncOptions(2)), 0, 0);
  check_close(nn::AdaptiveAvgPool3d(3)(x), F::avg_pool3d(x, F::AvgPool3dFuncOptions(2)), 1e-6, 1e-6);
  nn::AdaptiveMaxPool3d amp(3);
  check_close(amp(x), mv, 0, 0);
  CHECK(equal(std::get<1>(amp->forward_with_indices(x)), mi));
  nn::AdaptiveMaxPool1d amp1(2);
  Tensor l = from_values({1, 5, 2, 8, 3}, {1, 5});
  check_close(amp1(l), {5, 8});
  CHECK(equal(std::get<1>(amp1->forward_with_indices(l)), longs({1, 3}).view({1, 2})));
  nn::MaxUnpool1d up1(2);
  check_close(up1(from_values({5, 8}, {1, 1, 2}), longs({1, 3}).view({1, 1, 2})), {0, 5, 0, 8});
  nn::MaxUnpool2d up2(nn::MaxUnpool2dOptions(2));
  CHECK(shape(up2(zeros({1, 1, 2, 2}), zeros({1, 1, 2, 2}, kLong))) == std::vector<int64_t>{1, 1, 4, 4});
  check_close(nn::LPPool1d(2, 2)(from_values({3, 4}, {1, 2})), {5}, 1e-6, 1e-6);
  check_close(nn::LPPool2d(nn::LPPool2dOptions(1, 2))(from_values({1, 2, 2, 4}, {1, 2, 2})), {9}, 1e-6, 1e-6);

  // Fractional: fixed samples are the "_random_samples" buffer and make forward deterministic.
  Tensor samples = rand({2, 3, 2});
  nn::FractionalMaxPool2d fmp(nn::FractionalMaxPool2dOptions(2).output_size(3)._random_samples(samples));
  CHECK(fmp->named_buffers().keys() == std::vector<std::string>{"_random_samples"});
  Tensor x2 = randn({2, 3, 7, 7});
  auto [fv, fi] = fmp->forward_with_indices(x2);
  check_close(fmp(x2), fv, 0, 0);
  check_close(fv,
              F::fractional_max_pool2d(
                  x2, F::FractionalMaxPool2dFuncOptions(2).output_size(3)._random_samples(samples)),
              0, 0);
  nn::FractionalMaxPool3d fmp3(
      nn::FractionalMaxPool3dOptions(2).output_ratio(ExpandingArray<3, double>(0.5)));
  CHECK(shape(fmp3(x)) == std::vector<int64_t>{2, 3, 3, 3, 3});

  CHECK(repr(nn::MaxPool3d(2)) ==
        "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(repr(nn::MaxPool3d(nn::MaxPool3dOptions({1, 2, 3}).stride(1).padding({0, 1, 1}))) ==
        "MaxPool3d(kernel_size=(1, 2, 3), stride=1, padding=(0, 1, 1), dilation=1, ceil_mode=False)");
  CHECK(repr(nn::AvgPool3d(2)) == "AvgPool3d(kernel_size=2, stride=2, padding=0)");
  CHECK(repr(nn::AvgPool3d(nn::AvgPool3dOptions({1, 2, 3}).stride(1).padding({0, 1, 1}))) ==
        "AvgPool3d(kernel_size=(1, 2, 3), stride=1, padding=(0, 1, 1))");
  CHECK(repr(nn::AdaptiveAvgPool3d(2)) == "AdaptiveAvgPool3d(output_size=2)");
  CHECK(repr(nn::AdaptiveAvgPool3d(nn::AdaptiveAvgPool3dOptions({1, std::nullopt, 3}))) ==
        "AdaptiveAvgPool3d(output_size=(1, None, 3))");
  CHECK(repr(nn::AdaptiveMaxPool3d(nn::AdaptiveMaxPool3dOptions({2, 3, 4}))) ==
        "AdaptiveMaxPool3d(output_size=(2, 3, 4))");
  CHECK(repr(nn::AdaptiveMaxPool1d(3)) == "AdaptiveMaxPool1d(output_size=3)");
  CHECK(repr(nn::LPPool1d(2, 3)) == "LPPool1d(norm_type=2, kernel_size=3, stride=3, ceil_mode=False)");
  CHECK(repr(nn::LPPool2d(nn::LPPool2dOptions(2.5, {2, 3}).stride(1).ceil_mode(true))) ==
        "LPPool2d(norm_type=2.5, kernel_size=(2, 3), stride=1, ceil_mode=True)");
  CHECK(repr(nn::MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))");
  CHECK(repr(nn::MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))");
  CHECK(repr(nn::MaxUnpool3d(nn::MaxUnpool3dOptions({1, 2, 3}).stride(1).padding(1))) ==
        "MaxUnpool3d(kernel_size=(1, 2, 3), stride=(1, 1, 1), padding=(1, 1, 1))");
  CHECK(repr(fmp) == "FractionalMaxPool2d()");
  CHECK(repr(fmp3) == "FractionalMaxPool3d()");

  nn::MaxPool3dOptions mo(3);
  CHECK(mo.stride() == ExpandingArray<3>(3));
  CHECK(mo.padding() == ExpandingArray<3>(0));
  CHECK(mo.dilation() == ExpandingArray<3>(1));
  CHECK(!mo.ceil_mode());
  nn::AvgPool3dOptions ao(2);
  CHECK(ao.stride() == ExpandingArray<3>(2));
  CHECK(ao.count_include_pad());
  CHECK(!ao.divisor_override());
  nn::MaxUnpool3dOptions uo(2);
  CHECK(uo.stride() == ExpandingArray<3>(2));
  CHECK(uo.padding() == ExpandingArray<3>(0));
  F::MaxUnpool2dFuncOptions fo(3);
  CHECK(fo.stride() == ExpandingArray<2>(3));
  CHECK(!fo.output_size());
  nn::FractionalMaxPool2dOptions fro(2);
  CHECK(!fro.output_size());
  CHECK(!fro.output_ratio());
  CHECK(!fro._random_samples().defined());
  nn::LPPool2dOptions lo(2, 3);
  CHECK(lo.stride() == ExpandingArray<2>(3));
  CHECK(!lo.ceil_mode());
}

TEST_CASE("test_pooling3d_modules: PyTorch's errors") {
  Tensor x = randn({1, 1, 4, 4, 4});
  check_error(
      [] {
        F::max_pool3d(randn({3, 4}), F::MaxPool3dFuncOptions(2));
      },
      "non-empty 4D or 5D (batch mode) tensor expected for input");
  check_error(
      [] {
        F::max_pool3d(randn({1, 1, 1, 4, 4}), F::MaxPool3dFuncOptions(2));
      },
      "Given input size: (1x1x4x4). Calculated output size: (1x0x2x2). Output size is too small");
  check_error(
      [&] {
        max_pool3d(x, {2, 2});
      },
      "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  check_error(
      [&] {
        max_pool3d(x, 2, {1, 1});
      },
      "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  check_error(
      [] {
        F::max_pool3d(randn({1, 0, 4, 4, 4}), F::MaxPool3dFuncOptions(2));
      },
      "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions to have positive "
      "length, but input has a shape of [1, 0, 4, 4, 4] and non-batch dimension 0 has length zero!");
  check_error(
      [&] { F::max_pool3d(x, F::MaxPool3dFuncOptions(2).padding(2)); },
      "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1");
  check_error(
      [&] {
        F::max_pool3d(x, F::MaxPool3dFuncOptions(2).stride({1, 0, 1}));
      },
      "stride should not be zero");
  check_error([&] { F::max_pool3d(x, F::MaxPool3dFuncOptions(2).dilation(0)); },
              "dilation should be greater than zero, but got dilationT: 0 dilationH: 0 dilationW: 0");
  check_error([&] { F::max_pool3d(x.to(kBool), F::MaxPool3dFuncOptions(2)); },
              "\"max_pool3d\" not implemented for 'Bool'");
  check_error(
      [] {
        F::avg_pool3d(randn({1, 1, 1, 4, 4}), F::AvgPool3dFuncOptions(2));
      },
      "input image (T: 1 H: 4 W: 4) smaller than kernel size (kT: 2 kH: 2 kW: 2)");
  check_error([&] { F::avg_pool3d(x, F::AvgPool3dFuncOptions(2).divisor_override(0)); },
              "divisor must be not zero");
  check_error(
      [&] {
        avg_pool3d(x, {2, 2});
      },
      "avg_pool3d: kernel_size must be a single int, or a tuple of three ints");
  check_error(
      [] {
        F::avg_pool3d(randn({1, 1, 4, 0, 4}), F::AvgPool3dFuncOptions(2));
      },
      "avg_pool3d(): Expected input's non-batch dimensions to have positive length, but input has a shape of "
      "[1, 1, 4, 0, 4] and non-batch dimension 0 has length zero!");
  check_error(
      [] {
        F::adaptive_avg_pool3d(randn({3, 4}), F::AdaptiveAvgPool3dFuncOptions(2));
      },
      "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [3, 4]");
  check_error(
      [] {
        F::adaptive_max_pool3d(randn({3, 4}), F::AdaptiveMaxPool3dFuncOptions(2));
      },
      "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [3, 4]");
  check_error(
      [] {
        F::adaptive_avg_pool3d(randn({1, 3, 4, 4, 4}), F::AdaptiveAvgPool3dFuncOptions({2, -1, 2}));
      },
      "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but received {2, "
      "-1,2}");
  check_error(
      [] {
        F::adaptive_max_pool3d(randn({1, 3, 4, 4, 4}), F::AdaptiveMaxPool3dFuncOptions({2, -1, 2}));
      },
      "Trying to create tensor with negative dimension -1: [1, 3, 2, -1, 2]");
  check_error(
      [] {
        F::adaptive_avg_pool3d(randn({1, 0, 4, 4, 4}), F::AdaptiveAvgPool3dFuncOptions(2));
      },
      "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input has "
      "sizes [1, 0, 4, 4, 4] with dimension 1 being empty");
  check_error(
      [] {
        F::adaptive_max_pool3d(randn({1, 0, 4, 4, 4}), F::AdaptiveMaxPool3dFuncOptions(2));
      },
      "adaptive_max_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input has "
      "sizes [1, 0, 4, 4, 4] with dimension 1 being empty");
  check_error([&] { adaptive_avg_pool3d(x, {2, 2}); }, "adaptive_avg_pool3d: output_size must be 3");

  // Unpooling.
  Tensor v = randn({1, 1, 2, 2});
  Tensor zero_idx = zeros({1, 1, 2, 2}, kLong);
  check_error(
      [&] {
        F::max_unpool2d(v, zero_idx, F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{7, 7}));
      },
      "invalid output_size \"(7, 7)\" (dim 0 must be between 2 and 6)");
  check_error(
      [&] {
        F::max_unpool2d(v, zero_idx, F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{1, 1, 3}));
      },
      "output_size should be a sequence containing 2 or 4 elements, but it has a length of '3'");
  check_error(
      [&] {
        F::max_unpool2d(v, full({1, 1, 2, 2}, 99, kLong), F::MaxUnpool2dFuncOptions(2));
      },
      "Found an invalid max index: 99 (output volumes are of size 4x4");
  check_error(
      [] {
        F::max_unpool3d(randn({1, 1, 2, 2, 2}), full({1, 1, 2, 2, 2}, 99, kLong),
                        F::MaxUnpool3dFuncOptions(2));
      },
      "Found an invalid max index: 99 (output volumes are of size 4x4x4");
  check_error(
      [] {
        F::max_unpool1d(randn({1, 1, 2}), full({1, 1, 2}, -1, kLong), F::MaxUnpool1dFuncOptions(2));
      },
      "Found an invalid max index: -1 (output volumes are of size 4x1");
  check_error(
      [] {
        F::max_unpool2d(randn({2, 2}), zeros({2, 2}, kLong), F::MaxUnpool2dFuncOptions(2));
      },
      "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 dimensions.");
  check_error(
      [] {
        F::max_unpool3d(randn({2, 2, 2}), zeros({2, 2, 2}, kLong), F::MaxUnpool3dFuncOptions(2));
      },
      "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 dimensions.");
  check_error(
      [&] {
        F::max_unpool2d(v, zeros({1, 1, 2, 3}, kLong), F::MaxUnpool2dFuncOptions(2));
      },
      "Expected shape of indices to be same as that of the input tensor ([1, 1, 2, 2]) but got indices "
      "tensor with shape: [1, 1, 2, 3]");
  check_error(
      [&] {
        F::max_unpool2d(v, zeros({1, 1, 2, 2}), F::MaxUnpool2dFuncOptions(2));
      },
      "elements in indices should be type int64 but got: Float");
  check_error(
      [] {
        F::max_unpool2d(randn({1, 0, 2, 2}), zeros({1, 0, 2, 2}, kLong), F::MaxUnpool2dFuncOptions(2));
      },
      "max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but "
      "got [1, 0, 2, 2] with dimension 1 being empty.");

  // Fractional.
  Tensor f = randn({1, 1, 4, 4});
  check_error([&] { F::fractional_max_pool2d(f, F::FractionalMaxPool2dFuncOptions(2)); },
              "fractional_max_pool2d requires specifying either an output_size or an output_ratio");
  check_error([&] { F::fractional_max_pool2d(f, F::FractionalMaxPool2dFuncOptions(3).output_size(3)); },
              "fractional_max_pool2d(): pool height 3 too large relative to input height 4");
  check_error(
      [&] {
        F::fractional_max_pool2d(f, F::FractionalMaxPool2dFuncOptions({2, 3}).output_size(3));
      },
      "fractional_max_pool2d(): pool width 3 too large relative to input width 4");
  check_error(
      [] {
        F::fractional_max_pool3d(randn({1, 4, 4, 4}), F::FractionalMaxPool3dFuncOptions(3).output_size(3));
      },
      "fractional_max_pool3d_out(): pool time 3 too large relative to input time 4");
  check_error(
      [] {
        F::fractional_max_pool2d(randn({1, 1, 2, 4, 4}), F::FractionalMaxPool2dFuncOptions(2).output_size(2));
      },
      "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [1, 1, 2, 4, 4]");
  auto with_samples = [&](const Tensor& s) {
    F::fractional_max_pool2d(randn({1, 2, 4, 4}),
                             F::FractionalMaxPool2dFuncOptions(2).output_size(2)._random_samples(s));
  };
  check_error(
      [&] {
        with_samples(rand({1, 2, 2}, kDouble));
      },
      "Expect _random_samples to have the same dtype as input");
  check_error([&] { with_samples(rand({2, 2})); }, "Expect _random_samples to have 3 dimensions, got 2");
  check_error(
      [&] {
        with_samples(rand({1, 3, 2}));
      },
      "Expect _random_samples.size(1) equals to input channel size.");
  check_error([&] { with_samples(rand({1, 2, 3})); }, "Expect _random_samples.size(2) equals to 2; got 3.");
  check_error([] { nn::FractionalMaxPool2d(2); },
              "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio");
  check_error(
      [] {
        nn::FractionalMaxPool2d(
            nn::FractionalMaxPool2dOptions(2).output_size(2).output_ratio(ExpandingArray<2, double>(0.5)));
      },
      "only one of output_size and output_ratio may be specified");
  check_error(
      [] {
        nn::FractionalMaxPool3d(
            nn::FractionalMaxPool3dOptions(2).output_ratio(ExpandingArray<3, double>(1.5)));
      },
      "output_ratio must be between 0 and 1 (got ");
}
