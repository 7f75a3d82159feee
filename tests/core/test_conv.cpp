// Convolutions: values against hand-worked cases, PyTorch (tests/core/fixtures/make_conv.py)
// and the direct reference loops in core/cpu/conv.h over a sweep of shapes; gradients by
// float64 gradcheck (and one gradgradcheck); PyTorch's error texts.
#include <tuple>

#include "ember/core/cpu/conv.h"
#include "ember/core/ops/conv.h"
#include "op_check.h"

using namespace ember;
using namespace ember::test;

namespace {

/// One configuration of the reference sweep.
struct Case {
  int64_t n, c, h, w, o, kh, kw, stride, pad, dil, groups;
};

const Case kCases[] = {
    {1, 1, 5, 5, 1, 3, 3, 1, 0, 1, 1},  {2, 3, 7, 6, 4, 3, 2, 1, 1, 1, 1},  {3, 4, 8, 8, 6, 3, 3, 2, 1, 1, 2},
    {2, 2, 9, 7, 2, 2, 3, 3, 2, 2, 1},  {2, 6, 5, 5, 6, 3, 3, 1, 1, 1, 6},  {1, 3, 6, 6, 5, 1, 1, 1, 0, 1, 1},
    {2, 4, 6, 5, 4, 1, 1, 2, 1, 1, 2},  {5, 1, 28, 28, 8, 3, 3, 1, 1, 1, 1}, {17, 8, 14, 14, 16, 3, 3, 1, 1, 1, 1},
};

}  // namespace

TEST_CASE("conv2d: hand-worked values") {
  // x = 0..8 as 3x3, a 2x2 kernel of ones: each output sums one 2x2 window,
  // [0+1+3+4, 1+2+4+5; 3+4+6+7, 4+5+7+8] = [8, 12; 20, 24]; bias 1 adds one.
  Tensor x = seq({1, 1, 3, 3});
  check_close(conv2d(x, ones({1, 1, 2, 2}, kDouble)), {8, 12, 20, 24});
  check_close(conv2d(x, ones({1, 1, 2, 2}, kDouble), ones({1}, kDouble)), {9, 13, 21, 25});
  // padding 1, stride 2 with a 1x1 kernel of 2: rows/cols -1, 1, 3 -> only (1,1) is inside: 2 * 4 = 8.
  check_close(conv2d(x, full({1, 1, 1, 1}, 2.0, kDouble), {}, 2, 1), {0, 0, 0, 0, 8, 0, 0, 0, 0});
}

TEST_CASE("conv: PyTorch values") {
  // tests/core/fixtures/make_conv.py
  Tensor x = seq({1, 1, 4, 4}, kFloat), w = seq({1, 1, 2, 2}, kFloat);
  check_close(conv2d(x, w, {}, 1, "same"), {24, 30, 36, 14, 48, 54, 60, 22, 72, 78, 84, 30, 13, 14, 15, 0});
  Tensor w1 = from_values({1, -1, 2, 0.5}, {1, 1, 4}, kFloat);
  check_close(conv1d(seq({1, 1, 6}, kFloat), w1, {}, 1, "same", 2), {3.5, 6, 7.5, 6, 8, -2});
  Tensor xt = seq({1, 2, 2, 2}, kFloat), wt = seq({2, 1, 2, 2}, kFloat) / 4;
  check_close(conv_transpose2d(xt, wt, full({1}, 0.5), 2, 1, 1), {7.5, 8.5, 10, 8.5, 7.5, 10, 12.5, 12.5, 15});
  Tensor xg = seq({2, 4, 3, 3}, kFloat) / 10, wg = linspace(-1, 1, 48).view({6, 2, 2, 2});
  Tensor yg = conv2d(xg, wg, arange(6, kFloat), 1, 0, 1, 2);
  CHECK(shape(yg) == std::vector<int64_t>{2, 6, 2, 2});
  std::vector<double> expect = {-4.059575, -4.740426, -6.102128, -6.782979, -1.289362, -1.697873, -2.514894,
                                -2.923405, 1.480851,  1.344681,  1.07234,   0.93617,   6.702128,  6.838298,
                                7.110639,  7.246809,  14.374468, 14.782979, 15.6,      16.008511, 22.046808,
                                22.727661, 24.089361, 24.770214, -28.570215, -29.251066, -30.612766, -31.293619,
                                -15.995745, -16.404257, -17.221279, -17.629789, -3.421278, -3.557447, -3.829789,
                                -3.965959, 11.604257, 11.740427, 12.012767, 12.148937, 29.080853, 29.489363,
                                30.306381, 30.714895, 46.557449, 47.238297, 48.600002, 49.280853};
  check_close(yg, expect, 1e-4, 1e-5);
}

TEST_CASE("conv2d and conv_transpose2d match the reference loops") {
  manual_seed(0);
  for (const Case& k : kCases) {
    for (ScalarType dt : {kFloat, kDouble}) {
      INFO("case n=" << k.n << " c=" << k.c << " k=" << k.kh << "x" << k.kw << " s=" << k.stride << " p=" << k.pad
                     << " d=" << k.dil << " g=" << k.groups << " dtype=" << scalar_type_name(dt));
      Tensor x = randn({k.n, k.c, k.h, k.w}, dt), w = randn({k.o, k.c / k.groups, k.kh, k.kw}, dt);
      Tensor b = randn({k.o}, dt);
      std::vector<int64_t> s{k.stride, k.stride}, p{k.pad, k.pad}, d{k.dil, k.dil};
      Tensor y = conv2d(x, w, b, s, p, d, k.groups);
      check_close(y, cpu::conv2d_reference(x, w, b, s, p, d, k.groups), 1e-4, 1e-4);
      // The transposed convolution maps y's shape back: weight (O, C/g, ...) read as (C_in, C_out/g, ...).
      Tensor wt = randn({k.o, k.c / k.groups, k.kh, k.kw}, dt), bt = randn({k.c}, dt);
      std::vector<int64_t> op{k.stride > 1 ? 1 : 0, 0};
      if (k.dil <= op[0]) op[0] = 0;
      Tensor z = conv_transpose2d(y, wt, bt, s, p, op, k.groups, d);
      check_close(z, cpu::conv_transpose2d_reference(y, wt, bt, s, p, op, k.groups, d), 1e-4, 1e-4);
    }
  }
}

TEST_CASE("conv: integer and bfloat16 dtypes as PyTorch's CPU kernels") {
  Tensor x = seq({1, 2, 4, 4}, kLong), w = seq({3, 2, 2, 2}, kLong) - 4;
  Tensor y = conv2d(x, w, {}, 1, 1);
  CHECK(y.dtype() == kLong);
  check_close(y, cpu::conv2d_reference(x, w, {}, {1, 1}, {1, 1}, {1, 1}, 1), 0, 0);
  Tensor yb = conv2d(x.to(kBFloat16), w.to(kBFloat16));
  CHECK(yb.dtype() == kBFloat16);
  check_close(yb, values(conv2d(x, w).to(kBFloat16)), 0, 0);
}

TEST_CASE("conv1d and conv_transpose1d run as height-1 2-d convolutions") {
  manual_seed(1);
  Tensor x = randn({3, 4, 11}, kDouble), w = randn({6, 2, 3}, kDouble), b = randn({6}, kDouble);
  Tensor y = conv1d(x, w, b, 2, 1, 2, 2);
  CHECK(shape(y) == std::vector<int64_t>{3, 6, 5});  // (11 + 2 - 2*2 - 1) / 2 + 1 = 5
  check_close(y, cpu::conv2d_reference(x.unsqueeze(2), w.unsqueeze(2), b, {1, 2}, {0, 1}, {1, 2}, 2).squeeze(2));
  Tensor wt = randn({6, 2, 3}, kDouble);
  Tensor z = conv_transpose1d(y, wt, {}, 2, 1, 1, 2, 2);
  CHECK(shape(z) == std::vector<int64_t>{3, 4, 12});  // (5-1)*2 - 2 + 2*2 + 1 + 1
  check_close(z, cpu::conv_transpose2d_reference(y.unsqueeze(2), wt.unsqueeze(2), {}, {1, 2}, {0, 1}, {0, 1}, 2,
                                                 {1, 2})
                     .squeeze(2));
}

TEST_CASE("conv: output shapes") {
  Tensor x = zeros({2, 3, 28, 28});
  CHECK(shape(conv2d(x, zeros({32, 3, 3, 3}), {}, 1, 1)) == std::vector<int64_t>{2, 32, 28, 28});
  CHECK(shape(conv2d(x, zeros({8, 3, 3, 3}), {}, 2, 1)) == std::vector<int64_t>{2, 8, 14, 14});
  CHECK(shape(conv2d(x, zeros({8, 3, 5, 3}), {}, {2, 1}, {0, 2}, {1, 3})) == std::vector<int64_t>{2, 8, 12, 26});
  CHECK(shape(conv2d(x, zeros({6, 1, 3, 3}), {}, 1, 0, 1, 3)) == std::vector<int64_t>{2, 6, 26, 26});
  CHECK(shape(conv2d(x, zeros({4, 3, 4, 5}), {}, 1, "same", 2)) == std::vector<int64_t>{2, 4, 28, 28});
  CHECK(shape(conv2d(x, zeros({4, 3, 4, 5}), {}, 1, "valid")) == std::vector<int64_t>{2, 4, 25, 24});
  CHECK(shape(conv2d(x, zeros({4, 3, 4, 4}), {}, 1, std::string("same"))) == std::vector<int64_t>{2, 4, 28, 28});
  // Unbatched inputs come back unbatched; an empty batch stays empty.
  CHECK(shape(conv2d(zeros({3, 8, 8}), zeros({5, 3, 3, 3}))) == std::vector<int64_t>{5, 6, 6});
  CHECK(shape(conv1d(zeros({3, 8}), zeros({5, 3, 3}))) == std::vector<int64_t>{5, 6});
  CHECK(shape(conv_transpose2d(zeros({3, 4, 4}), zeros({3, 2, 3, 3}))) == std::vector<int64_t>{2, 6, 6});
  CHECK(shape(conv2d(zeros({0, 3, 8, 8}), zeros({5, 3, 3, 3}))) == std::vector<int64_t>{0, 5, 6, 6});
  CHECK(shape(conv_transpose2d(zeros({0, 1, 3, 3}), zeros({1, 1, 2, 2}))) == std::vector<int64_t>{0, 1, 4, 4});
  // conv_transpose2d: (4-1)*2 - 2*1 + 1*(3-1) + 1 + 1 = 8
  CHECK(shape(conv_transpose2d(zeros({1, 4, 4, 4}), zeros({4, 3, 3, 3}), {}, 2, 1, 1)) ==
        std::vector<int64_t>{1, 3, 8, 8});
  // Zero input channels: every output is the bias.
  check_close(conv2d(zeros({1, 0, 3, 3}), zeros({2, 0, 2, 2}), ones({2})), std::vector<double>(8, 1.0));
}

TEST_CASE("conv: autograd node and gradients") {
  Tensor x = rand_leaf({1, 2, 5, 5}), w = rand_leaf({3, 2, 3, 3});
  CHECK(conv2d(x, w).grad_fn()->name() == "ConvolutionBackward0");
}

TEST_CASE("conv: gradcheck") {
  manual_seed(2);
  SUBCASE("conv1d") {
    check_grad([](const TensorList& t) { return conv1d(t[0], t[1], t[2], 2, 1, 1, 1); },
               {rand_leaf({2, 2, 7}), rand_leaf({3, 2, 3}), rand_leaf({3})});
  }
  SUBCASE("conv2d with groups, stride and dilation") {
    check_grad([](const TensorList& t) { return conv2d(t[0], t[1], t[2], {2, 1}, {1, 2}, {1, 2}, 2); },
               {rand_leaf({2, 4, 6, 5}), rand_leaf({4, 2, 3, 2}), rand_leaf({4})});
  }
  SUBCASE("conv2d on a non-contiguous input") {
    Tensor base = rand_leaf({2, 5, 3, 6});
    check_grad([](const TensorList& t) { return conv2d(t[0].transpose(1, 2), t[1], {}, 1, 1); },
               {base, rand_leaf({2, 3, 2, 2})});
  }
  SUBCASE("conv2d same with an even kernel, unbatched") {
    check_grad([](const TensorList& t) { return conv2d(t[0], t[1], {}, 1, "same"); },
               {rand_leaf({2, 4, 5}), rand_leaf({2, 2, 2, 3})});
  }
  SUBCASE("conv_transpose2d") {
    check_grad([](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], 2, 1, 1, 2, 1); },
               {rand_leaf({2, 4, 3, 3}), rand_leaf({4, 1, 3, 3}), rand_leaf({2})});
  }
  SUBCASE("conv_transpose1d with dilation") {
    check_grad([](const TensorList& t) { return conv_transpose1d(t[0], t[1], {}, 1, 1, 0, 1, 2); },
               {rand_leaf({2, 2, 5}), rand_leaf({2, 3, 3})});
  }
  SUBCASE("conv_transpose1d with output_padding >= stride (allowed below the dilation)") {
    check_grad([](const TensorList& t) { return conv_transpose1d(t[0], t[1], {}, 1, 0, 1, 1, 2); },
               {rand_leaf({2, 2, 4}), rand_leaf({2, 1, 2})});
    check_gradgrad([](const TensorList& t) { return conv_transpose1d(t[0], t[1], {}, 1, 0, 1, 1, 2); },
                   {rand_leaf({1, 2, 4}), rand_leaf({2, 1, 2})});
  }
}

TEST_CASE("conv: gradgradcheck") {
  manual_seed(3);
  check_gradgrad([](const TensorList& t) { return conv2d(t[0], t[1], t[2], 2, 1, 1, 1); },
                 {rand_leaf({2, 2, 5, 4}), rand_leaf({2, 2, 2, 3}), rand_leaf({2})});
  check_gradgrad([](const TensorList& t) { return conv_transpose2d(t[0], t[1], {}, 2, 0, 1); },
                 {rand_leaf({1, 2, 3, 3}), rand_leaf({2, 2, 2, 2})});
}

TEST_CASE("conv: the batch-chunked weight gradient equals the sum of per-image gradients") {
  manual_seed(4);
  // 19 images split into 8 chunks of partial sums.
  Tensor x = randn({19, 3, 6, 6}, kDouble), w = randn({4, 3, 3, 3}, kDouble).requires_grad_(true);
  Tensor r = randn({19, 4, 6, 6}, kDouble);
  Tensor gw = autograd::grad({(conv2d(x, w, {}, 1, 1) * r).sum()}, {w})[0];
  Tensor expect = zeros({4, 3, 3, 3}, kDouble);
  for (int64_t n = 0; n < 19; ++n)
    expect = expect + autograd::grad({(conv2d(x.narrow(0, n, 1), w, {}, 1, 1) * r.narrow(0, n, 1)).sum()}, {w})[0];
  check_close(gw, expect, 1e-10, 1e-10);
}

TEST_CASE("conv: results do not depend on the thread count") {
  manual_seed(5);
  Tensor x = randn({16, 8, 14, 14}).requires_grad_(true), w = randn({16, 8, 3, 3}).requires_grad_(true);
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor y = conv2d(x, w, {}, 1, 1);
    auto g = autograd::grad({(y * y).sum()}, {x, w});
    return std::make_tuple(values(y), values(g[0]), values(g[1]));
  };
  const int before = get_num_threads();
  auto one = run(1), two = run(2);
  set_num_threads(before);
  CHECK(std::get<0>(one) == std::get<0>(two));
  CHECK(std::get<1>(one) == std::get<1>(two));
  CHECK(std::get<2>(one) == std::get<2>(two));
}

TEST_CASE("conv: PyTorch's errors") {
  Tensor x = zeros({1, 2, 3, 3});
  check_error([&] { conv2d(zeros({3, 3}), zeros({1, 1, 2, 2})); },
              "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 3]");
  check_error([&] { conv1d(zeros({5}), zeros({2, 1, 3})); },
              "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [5]");
  check_error([&] { conv_transpose2d(zeros({3, 3}), zeros({2, 1, 2, 2})); },
              "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: [3, 3]");
  check_error([&] { conv2d(x, zeros({3, 3, 2, 2})); },
              "Given groups=1, weight of size [3, 3, 2, 2], expected input[1, 2, 3, 3] to have 3 channels, but got 2 "
              "channels instead");
  check_error([&] { conv2d(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3})); },
              "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater "
              "than actual input size");
  check_error([&] { conv1d(zeros({2, 1, 2}), zeros({2, 1, 3})); },
              "Calculated padded input size per channel: (2). Kernel size: (3).");
  check_error([&] { conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), {}, 2, "same"); },
              "padding='same' is not supported for strided convolutions");
  check_error([&] { conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), {}, 1, "foo"); }, "Invalid padding string: 'foo'");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), {}, 0); }, "non-positive stride is not supported");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), {}, 1, -1); }, "negative padding is not supported");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), {}, 1, 0, {1, 0}); },
              "dilation should be greater than zero, but got [1, 0]");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), {}, 1, 0, 1, 0); }, "non-positive groups is not supported");
  check_error([&] { conv2d(zeros({1, 4, 5, 5}), zeros({3, 2, 3, 3}), {}, 1, 0, 1, 2); },
              "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
              "[[3, 2, 3, 3]] instead");
  check_error([&] { conv2d(x, zeros({1, 1, 2, 2}), {}, 1, 0, 1, 2); },
              "Given groups=2, expected weight to be at least 2 at dimension 0, but got weight of size [1, 1, 2, 2] "
              "instead");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), {}, {1, 1, 1}); },
              "expected stride to be a single integer value or a list of 2 values to match the convolution "
              "dimensions, but got stride=[1, 1, 1]");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), zeros({2})); },
              "Given weight of size [1, 2, 2, 2], expected bias to be 1-dimensional with 1 elements, but got bias of "
              "size [2] instead");
  check_error([&] { conv2d(x, zeros({1, 2, 2, 2}), zeros({1}, kDouble)); },
              "Input type (float) and bias type (double) should be the same");
  check_error([&] { conv2d(x.to(kDouble), zeros({1, 2, 2, 2})); }, "expected scalar type Double but found Float");
  check_error([&] { conv2d(x.to(kBool), zeros({1, 2, 2, 2}, kBool)); },
              "\"slow_conv2d_cpu\" not implemented for 'Bool'");
  check_error([&] { convolution(x, zeros({1, 1}), {}, 1, 0, 1, false, 0, 1); },
              "weight should have at least three dimensions");
  check_error([&] { convolution(x, zeros({1, 2, 2}), {}, 1, 0, 1, false, 0, 1); },
              "Expected 3-dimensional input for 3-dimensional weight [1, 2, 2], but got 4-dimensional input of size "
              "[1, 2, 3, 3] instead");
  // Transposed.
  check_error([&] { conv_transpose2d(x, zeros({3, 1, 2, 2})); },
              "Given transposed=1, weight of size [3, 1, 2, 2], expected input[1, 2, 3, 3] to have 3 channels, but "
              "got 2 channels instead");
  check_error([&] { conv_transpose2d(x, zeros({2, 1, 2, 2}), {}, 1, 0, 1); },
              "output padding must be smaller than either stride or dilation, but got output_padding_height: 1 "
              "output_padding_width: 1 stride_height: 1 stride_width: 1 dilation_height: 1 dilation_width: 1");
  check_error([&] { conv_transpose1d(zeros({1, 1, 3}), zeros({1, 1, 2}), {}, 1, 3); },
              "Given input size per channel: (1 x 3). Calculated output size per channel: (1 x -2). Output size is "
              "too small");
  check_error([&] { conv_transpose2d(x, zeros({2, 1, 2, 2}), {}, 1, 0, -1); },
              "negative output_padding is not supported");
  check_error([&] { conv_transpose2d(x, zeros({2, 1, 2, 2}), {}, 1, 0, 0, 1, 0); },
              "dilation should be greater than zero, but got dilation_height: 0, dilation_width: 0");
  check_error([&] { conv_transpose1d(zeros({1, 2, 3}), zeros({2, 1, 2}), ones({2})); },
              "Given transposed=1, weight of size [2, 1, 2], expected bias to be 1-dimensional with 1 elements, but "
              "got bias of size [2] instead");
  // PyTorch 2.x convolves Half on the CPU (tests/core/test_low_precision.cpp); Bool stays out.
  check_error([&] { conv_transpose2d(x.to(kBool), zeros({2, 1, 2, 2}, kBool)); },
              "\"slow_conv_transpose2d_out_cpu\" not implemented for 'Bool'");
}

namespace {

/// Naive weight gradient in double: gw[o][c][i][j] = sum over n, y, z of
/// g[n][o][y][z] * x[n][grp*cg + c][y*s - p + i*d][z*s - p + j*d] (zero outside).
Tensor weight_grad_reference(const Tensor& x_, const Tensor& g_, IntArrayRef wsizes, IntArrayRef st, IntArrayRef pd,
                             IntArrayRef dl, int64_t groups) {
  Tensor x = x_.detach().to(kDouble).contiguous(), g = g_.detach().to(kDouble).contiguous();
  const int64_t n_ = x.size(0), h = x.size(2), wd = x.size(3), o_ = g.size(1), oh = g.size(2), ow = g.size(3);
  const int64_t cg = wsizes[1], kh = wsizes[2], kw = wsizes[3], og = o_ / groups;
  Tensor gw = zeros({o_, cg, kh, kw}, kDouble);
  const double *xp = x.data_ptr<double>(), *gp = g.data_ptr<double>();
  double* wp = gw.data_ptr<double>();
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t o = 0; o < o_; ++o)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            double acc = 0;
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t z = 0; z < ow; ++z) {
                const int64_t ih = y * st[0] - pd[0] + i * dl[0], iw = z * st[1] - pd[1] + j * dl[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                acc += gp[((n * o_ + o) * oh + y) * ow + z] * xp[((n * x.size(1) + (o / og) * cg + c) * h + ih) * wd + iw];
              }
            wp[((o * cg + c) * kh + i) * kw + j] += acc;
          }
  return gw.to(x_.dtype());
}

/// Shapes that reach every path of the tiled kernels: multi-image tiles with a partial last
/// tile, row tiles of large images (with a partial last row tile), the direct small-K loops
/// (one input channel, K <= 16) and the GEMM ones, the flipped-kernel input gradient (unit
/// stride, padding <= d(k-1)) and the col2im one (stride > 1, or padding beyond d(k-1)).
const Case kTiledCases[] = {
    {7, 1, 13, 11, 5, 3, 3, 1, 1, 1, 1},     // small K, several images per tile
    {3, 1, 9, 9, 4, 4, 4, 1, 2, 1, 1},       // K = 16, an even kernel
    {2, 2, 9, 8, 6, 3, 3, 1, 1, 2, 2},       // small K per group, dilation 2
    {11, 5, 9, 7, 6, 3, 3, 1, 1, 1, 1},      // GEMM, multi-image tiles
    {40, 3, 20, 20, 4, 3, 3, 1, 1, 1, 1},    // 12 images per tile: a partial last tile, chunks cut tiles
    {2, 24, 61, 37, 7, 3, 3, 1, 1, 1, 1},    // row tiles, partial last one
    {2, 16, 45, 50, 5, 3, 2, 2, 1, 1, 1},    // strided: col2im input gradient, row tiles
    {3, 8, 10, 9, 4, 2, 2, 1, 3, 1, 2},      // padding 3 > d(k-1): col2im with cropping
    {2, 6, 12, 12, 6, 3, 3, 1, 0, 1, 3},     // groups, no padding
    {4, 3, 7, 7, 5, 1, 1, 1, 0, 1, 1},       // pointwise
    {9, 4, 6, 6, 8, 1, 1, 2, 1, 1, 2},       // 1x1 with stride and padding, small K
    {3, 20, 33, 40, 9, 5, 5, 1, 2, 1, 1},    // 5x5, K = 500, row tiles, shift-copy im2col with |shift| 2
    {3, 4, 11, 9, 5, 3, 3, 1, 2, 2, 1},      // dilated "same": shift-copy im2col with dilation
    {2, 3, 1, 1, 4, 3, 3, 1, 1, 1, 1},       // 1x1 image, padding as wide as the image
    {2, 5, 2, 7, 3, 3, 3, 1, 1, 1, 1},       // more padding rows than image rows per tile
};

}  // namespace

TEST_CASE("conv: tiled kernels match the reference loops (values and both gradients)") {
  manual_seed(6);
  for (const Case& k : kTiledCases) {
    for (ScalarType dt : {kFloat, kDouble}) {
      INFO("case n=" << k.n << " c=" << k.c << " h=" << k.h << " w=" << k.w << " o=" << k.o << " k=" << k.kh << "x"
                     << k.kw << " s=" << k.stride << " p=" << k.pad << " d=" << k.dil << " g=" << k.groups
                     << " dtype=" << scalar_type_name(dt));
      Tensor x = randn({k.n, k.c, k.h, k.w}, dt).requires_grad_(true);
      Tensor w = randn({k.o, k.c / k.groups, k.kh, k.kw}, dt).requires_grad_(true);
      Tensor b = randn({k.o}, dt).requires_grad_(true);
      std::vector<int64_t> s{k.stride, k.stride}, p{k.pad, k.pad}, d{k.dil, k.dil};
      Tensor y = conv2d(x, w, b, s, p, d, k.groups);
      const double tol = dt == kFloat ? 2e-4 : 1e-10;
      check_close(y, cpu::conv2d_reference(x, w, b, s, p, d, k.groups), tol, tol);
      Tensor r = randn(y.sizes(), dt);
      auto grads = autograd::grad({(y * r).sum()}, {x, w, b});
      // The input gradient is the transposed convolution of r back onto x's size.
      std::vector<int64_t> op(2);
      for (int64_t i = 0; i < 2; ++i) {
        const int64_t kk = i == 0 ? k.kh : k.kw, in = i == 0 ? k.h : k.w;
        op[static_cast<size_t>(i)] = in - ((y.size(i + 2) - 1) * k.stride - 2 * k.pad + k.dil * (kk - 1) + 1);
      }
      check_close(grads[0], cpu::conv_transpose2d_reference(r, w, {}, s, p, op, k.groups, d), tol, tol);
      check_close(grads[1], weight_grad_reference(x, r, w.sizes(), s, p, d, k.groups), tol * 10, tol);
      check_close(grads[2], r.sum({0, 2, 3}), tol, tol);
    }
  }
}

TEST_CASE("conv: non-contiguous inputs, weights and gradients") {
  manual_seed(7);
  for (int64_t c : {1, 6}) {
    INFO("channels " << c);
    Tensor xb = randn({3, 9, 10, c}), wb = randn({3, 3, c, 8});
    Tensor x = xb.permute({0, 3, 1, 2}), w = wb.permute({3, 2, 0, 1});  // (3, c, 9, 10), (8, c, 3, 3)
    if (c > 1) CHECK(!x.is_contiguous());
    Tensor y = conv2d(x, w, {}, 1, 1);
    check_close(y, cpu::conv2d_reference(x, w, {}, {1, 1}, {1, 1}, {1, 1}, 1), 2e-4, 2e-4);
    // A transposed (non-contiguous) upstream gradient.
    Tensor xl = x.detach().requires_grad_(true), wl = w.detach().requires_grad_(true);
    Tensor r = randn({3, 9, 10, 8}).permute({0, 3, 1, 2});
    auto g = autograd::grad({(conv2d(xl, wl, {}, 1, 1) * r).sum()}, {xl, wl});
    check_close(g[0], cpu::conv_transpose2d_reference(r, w, {}, {1, 1}, {1, 1}, {0, 0}, 1, {1, 1}), 2e-4, 2e-4);
    check_close(g[1], weight_grad_reference(x, r, w.sizes(), {1, 1}, {1, 1}, {1, 1}, 1), 2e-3, 2e-4);
  }
}

TEST_CASE("conv: the sum() backward's expanded gradient gives the same gradients as a materialised one") {
  manual_seed(8);
  Tensor x = randn({5, 4, 8, 8}).requires_grad_(true), w = randn({6, 4, 3, 3}).requires_grad_(true);
  auto a = autograd::grad({conv2d(x, w, {}, 1, 1).sum()}, {x, w});
  auto b = autograd::grad({(conv2d(x, w, {}, 1, 1) * ones({5, 6, 8, 8})).sum()}, {x, w});
  CHECK(values(a[0]) == values(b[0]));
  CHECK(values(a[1]) == values(b[1]));
}
