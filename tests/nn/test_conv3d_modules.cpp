// Conv3d, ConvTranspose3d and F::conv3d / F::conv_transpose3d: values against direct loops
// (written here from the definitions) and against PyTorch's numbers, float64 gradcheck,
// parameter shapes and initialisation, Python's repr, option defaults and PyTorch's errors.
#include <cmath>
#include <sstream>
#include <vector>

#include "ember/nn/functional/conv.h"
#include "ember/nn/modules/conv.h"
#include "op_check.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}

struct Geometry {
  std::vector<int64_t> stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1}, output_padding{0, 0, 0};
  int64_t groups = 1;
};

/// y[n, o, z] = b[o] + sum over c in o's group and taps k of x[n, c, z * s - p + k * d] w[o, c, k].
Tensor direct_conv3d(const Tensor& x_, const Tensor& w_, const Tensor& b, const Geometry& g) {
  Tensor x = x_.detach().to(kDouble).contiguous(), w = w_.detach().to(kDouble).contiguous();
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), Cg = w.size(1), Og = O / g.groups;
  int64_t in[3], k[3], out[3];
  for (int i = 0; i < 3; ++i) {
    in[i] = x.size(i + 2);
    k[i] = w.size(i + 2);
    out[i] = (in[i] + 2 * g.padding[i] - g.dilation[i] * (k[i] - 1) - 1) / g.stride[i] + 1;
  }
  Tensor y = zeros({N, O, out[0], out[1], out[2]}, kDouble);
  const double* xp = x.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t bb = 0; bb < out[1]; ++bb)
          for (int64_t c = 0; c < out[2]; ++c) {
            double acc = b.defined() ? b[o].item<double>() : 0.0;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t i = 0; i < k[0]; ++i)
                for (int64_t j = 0; j < k[1]; ++j)
                  for (int64_t l = 0; l < k[2]; ++l) {
                    const int64_t z = a * g.stride[0] - g.padding[0] + i * g.dilation[0];
                    const int64_t h = bb * g.stride[1] - g.padding[1] + j * g.dilation[1];
                    const int64_t v = c * g.stride[2] - g.padding[2] + l * g.dilation[2];
                    if (z < 0 || z >= in[0] || h < 0 || h >= in[1] || v < 0 || v >= in[2]) continue;
                    const int64_t cin = (o / Og) * Cg + ci;
                    acc += xp[(((n * C + cin) * in[0] + z) * in[1] + h) * in[2] + v] *
                           wp[(((o * Cg + ci) * k[0] + i) * k[1] + j) * k[2] + l];
                  }
            yp[(((n * O + o) * out[0] + a) * out[1] + bb) * out[2] + c] = acc;
          }
  return y;
}

/// The adjoint: x[n, c, i] * w[c, o, k] lands on y[n, o, i * s - p + k * d].
Tensor direct_conv_transpose3d(const Tensor& x_, const Tensor& w_, const Tensor& b, const Geometry& g) {
  Tensor x = x_.detach().to(kDouble).contiguous(), w = w_.detach().to(kDouble).contiguous();
  const int64_t N = x.size(0), C = x.size(1), Og = w.size(1), O = Og * g.groups, Cg = C / g.groups;
  int64_t in[3], k[3], out[3];
  for (int i = 0; i < 3; ++i) {
    in[i] = x.size(i + 2);
    k[i] = w.size(i + 2);
    out[i] =
        (in[i] - 1) * g.stride[i] - 2 * g.padding[i] + g.dilation[i] * (k[i] - 1) + g.output_padding[i] + 1;
  }
  Tensor y = zeros({N, O, out[0], out[1], out[2]}, kDouble);
  const double* xp = x.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oo = 0; oo < Og; ++oo)
        for (int64_t a = 0; a < in[0]; ++a)
          for (int64_t bb = 0; bb < in[1]; ++bb)
            for (int64_t cc = 0; cc < in[2]; ++cc)
              for (int64_t i = 0; i < k[0]; ++i)
                for (int64_t j = 0; j < k[1]; ++j)
                  for (int64_t l = 0; l < k[2]; ++l) {
                    const int64_t z = a * g.stride[0] - g.padding[0] + i * g.dilation[0];
                    const int64_t h = bb * g.stride[1] - g.padding[1] + j * g.dilation[1];
                    const int64_t v = cc * g.stride[2] - g.padding[2] + l * g.dilation[2];
                    if (z < 0 || z >= out[0] || h < 0 || h >= out[1] || v < 0 || v >= out[2]) continue;
                    const int64_t o = (c / Cg) * Og + oo;
                    yp[(((n * O + o) * out[0] + z) * out[1] + h) * out[2] + v] +=
                        xp[(((n * C + c) * in[0] + a) * in[1] + bb) * in[2] + cc] *
                        wp[(((c * Og + oo) * k[0] + i) * k[1] + j) * k[2] + l];
                  }
  if (b.defined()) y = y + b.detach().to(kDouble).view({1, O, 1, 1, 1});
  return y;
}

F::Conv3dFuncOptions conv_options(const Geometry& g, const Tensor& b) {
  return F::Conv3dFuncOptions()
      .bias(b)
      .stride(ExpandingArray<3>(g.stride))
      .padding(ExpandingArray<3>(g.padding))
      .dilation(ExpandingArray<3>(g.dilation))
      .groups(g.groups);
}

F::ConvTranspose3dFuncOptions transpose_options(const Geometry& g, const Tensor& b) {
  return F::ConvTranspose3dFuncOptions()
      .bias(b)
      .stride(ExpandingArray<3>(g.stride))
      .padding(ExpandingArray<3>(g.padding))
      .output_padding(ExpandingArray<3>(g.output_padding))
      .dilation(ExpandingArray<3>(g.dilation))
      .groups(g.groups);
}

}  // namespace

TEST_CASE("test_conv3d_modules: F::conv3d equals the direct sum") {
  manual_seed(0);
  std::vector<Geometry> cases(5);
  cases[1].stride = {2, 1, 2};
  cases[2].padding = {1, 2, 0};
  cases[3].dilation = {2, 1, 2};
  cases[3].stride = {1, 2, 1};
  cases[4].groups = 2;
  cases[4].padding = {1, 1, 1};
  cases[4].stride = {2, 2, 1};
  for (const Geometry& g : cases) {
    Tensor x = randn({2, 4, 6, 5, 7});
    Tensor w = randn({6, 4 / g.groups, 3, 2, 3});
    Tensor b = randn({6});
    Tensor y = F::conv3d(x, w, conv_options(g, b));
    check_close(y, direct_conv3d(x, w, b, g), 1e-4, 1e-4);
    check_close(F::conv3d(x, w, conv_options(g, Tensor())), direct_conv3d(x, w, Tensor(), g), 1e-4, 1e-4);
  }
  // Unbatched input (C, D, H, W) gives (O, oD, oH, oW).
  Tensor x = randn({2, 3, 3, 3}, kDouble), w = randn({4, 2, 2, 2, 2}, kDouble);
  check_close(F::conv3d(x, w), direct_conv3d(x.unsqueeze(0), w, Tensor(), Geometry()).squeeze(0));
  // padding "same": output size = input size; an odd total pads one more at the end.
  Tensor xs = randn({1, 2, 4, 5, 6}, kDouble), ws = randn({3, 2, 2, 3, 4}, kDouble);
  Tensor same = F::conv3d(xs, ws, F::Conv3dFuncOptions().padding(kSame));
  CHECK(shape(same) == std::vector<int64_t>{1, 3, 4, 5, 6});
  Tensor padded = cat({xs, zeros({1, 2, 1, 5, 6}, kDouble)}, 2);
  padded = cat({padded, zeros({1, 2, 5, 5, 1}, kDouble)}, 4);
  Geometry gs;
  gs.padding = {0, 1, 1};
  check_close(same, direct_conv3d(padded, ws, Tensor(), gs));
  CHECK(shape(F::conv3d(xs, ws, F::Conv3dFuncOptions().padding(kValid))) ==
        std::vector<int64_t>{1, 3, 3, 3, 3});
}

TEST_CASE("test_conv3d_modules: F::conv3d and F::conv_transpose3d against PyTorch's numbers") {
  // import torch, torch.nn.functional as F
  // x = torch.arange(27, dtype=torch.float64).sin().reshape(1, 1, 3, 3, 3)
  // w = torch.arange(8, dtype=torch.float64).cos().reshape(1, 1, 2, 2, 2)
  // F.conv3d(x, w, torch.tensor([0.5], dtype=torch.float64)).flatten().tolist()
  Tensor x = arange(27, kDouble).sin().reshape({1, 1, 3, 3, 3});
  Tensor w = arange(8, kDouble).cos().reshape({1, 1, 2, 2, 2});
  check_close(F::conv3d(x, w, F::Conv3dFuncOptions().bias(full({1}, 0.5, kDouble))),
              {1.023017527856353, 4.319224826413958, 0.5753330146445196, -3.0226492297833967,
               1.7555649155120565, -2.225327629283112, -1.3138239243583323, 2.740540022668479},
              1e-12, 1e-12);
  // xt = torch.arange(8, dtype=torch.float64).sin().reshape(1, 1, 2, 2, 2)
  // wt = torch.arange(16, dtype=torch.float64).cos().reshape(1, 2, 2, 2, 2)
  // F.conv_transpose3d(xt, wt, stride=(2, 1, 1), padding=(1, 0, 0), output_padding=(1, 0, 0))
  Tensor xt = arange(8, kDouble).sin().reshape({1, 1, 2, 2, 2});
  Tensor wt = arange(16, kDouble).cos().reshape({1, 2, 2, 2, 2});
  Tensor y = F::conv_transpose3d(
      xt, wt, F::ConvTranspose3dFuncOptions().stride({2, 1, 1}).padding({1, 0, 0}).output_padding({1, 0, 0}));
  CHECK(shape(y) == std::vector<int64_t>{1, 2, 3, 3, 3});
  check_close(y,
              {0.0,
               -0.5500221413615028,
               0.23869349855450117,
               -0.5943564625123038,
               0.9736465389758708,
               0.6744172823100039,
               0.8730803709656549,
               0.8210206185433921,
               0.10639069220927921,
               -0.7568024953079282,
               -1.367826407964774,
               -0.5181089967534271,
               0.035525466114452064,
               1.6542998558992852,
               1.3042992109367597,
               0.11627787565772676,
               0.0032163519401209317,
               -0.650411803098649,
               0.4946791233116909,
               0.4121184852417566,
               -0.2720105554446849,
               -0.5440211108893697,
               -1.9999804131014067,
               -0.5365729180004349,
               -0.26828645900021747,
               0.4201670368266409,
               0.4953036778474351,
               0.0,
               0.7100786216886722,
               0.7635901368476526,
               0.7673142332921201,
               1.0592841024768282,
               -0.5111964390678156,
               0.12433480066768485,
               -0.6714859070175256,
               -0.10720716438562057,
               0.11011478865374665,
               0.8290691701282764,
               0.8737049255013992,
               0.6756663913814923,
               0.9602490218525266,
               -0.6028442809784431,
               0.23444958932143145,
               -0.5524953585779212,
               0.0029076242681260736,
               -0.6386307816442235,
               -1.4959500338598297,
               -0.8701727466975289,
               -0.3392689422275283,
               0.7446591179525528,
               1.3246635552717754,
               -0.03820649794787706,
               0.3021030965557832,
               -0.49910477795689284},
              1e-12, 1e-12);
}

TEST_CASE("test_conv3d_modules: F::conv_transpose3d equals the direct scatter") {
  manual_seed(1);
  std::vector<Geometry> cases(5);
  cases[1].stride = {2, 3, 1};
  cases[1].output_padding = {1, 2, 0};
  cases[2].padding = {1, 0, 2};
  cases[2].stride = {2, 1, 2};
  cases[3].dilation = {2, 1, 3};
  cases[3].output_padding = {1, 0, 2};
  cases[4].groups = 2;
  cases[4].stride = {3, 2, 1};
  cases[4].padding = {1, 1, 0};
  for (const Geometry& g : cases) {
    Tensor x = randn({2, 4, 3, 4, 3});
    Tensor w = randn({4, 6 / g.groups, 3, 2, 3});
    Tensor b = randn({6});
    check_close(F::conv_transpose3d(x, w, transpose_options(g, b)), direct_conv_transpose3d(x, w, b, g), 1e-4,
                1e-4);
    check_close(F::conv_transpose3d(x, w, transpose_options(g, Tensor())),
                direct_conv_transpose3d(x, w, Tensor(), g), 1e-4, 1e-4);
  }
  Tensor x = randn({3, 2, 2, 2}, kDouble), w = randn({3, 2, 2, 2, 2}, kDouble);
  check_close(F::conv_transpose3d(x, w),
              direct_conv_transpose3d(x.unsqueeze(0), w, Tensor(), Geometry()).squeeze(0));
}

TEST_CASE("test_conv3d_modules: float64 gradcheck of F::conv3d and F::conv_transpose3d") {
  manual_seed(2);
  Geometry g;
  g.stride = {2, 1, 1};
  g.padding = {1, 0, 1};
  g.dilation = {1, 2, 1};
  g.groups = 2;
  Tensor x = rand_leaf({1, 2, 3, 4, 3}), w = rand_leaf({4, 1, 2, 2, 2}), b = rand_leaf({4});
  check_grad([&](const TensorList& in) { return F::conv3d(in[0], in[1], conv_options(g, in[2])); },
             {x, w, b});
  Geometry t;
  t.stride = {2, 1, 2};
  t.padding = {1, 0, 0};
  t.output_padding = {1, 0, 1};
  t.groups = 2;
  Tensor xt = rand_leaf({1, 2, 2, 3, 2}), wt = rand_leaf({2, 2, 2, 2, 2}), bt = rand_leaf({4});
  check_grad(
      [&](const TensorList& in) { return F::conv_transpose3d(in[0], in[1], transpose_options(t, in[2])); },
      {xt, wt, bt});
  check_gradgrad([&](const TensorList& in) { return F::conv3d(in[0], in[1]); },
                 {rand_leaf({1, 1, 3, 3, 2}), rand_leaf({2, 1, 2, 2, 1})});
}

TEST_CASE("test_conv3d_modules: Conv3d and ConvTranspose3d parameters, init and forward") {
  manual_seed(3);
  nn::Conv3d conv(nn::Conv3dOptions(4, 8, {3, 2, 2}).padding(1).groups(2));
  CHECK(shape(conv->weight) == std::vector<int64_t>{8, 2, 3, 2, 2});
  CHECK(shape(conv->bias) == std::vector<int64_t>{8});
  CHECK(conv->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  // kaiming_uniform(a=sqrt(5)) and the bias: U(+-1/sqrt(fan_in)), fan_in = 2 * 3 * 2 * 2 = 24.
  const double bound = 1 / std::sqrt(24.0);
  CHECK(conv->weight.abs().max().item<double>() <= bound);
  CHECK(conv->weight.abs().max().item<double>() >= 0.8 * bound);
  CHECK(conv->bias.abs().max().item<double>() <= bound);
  Tensor x = randn({2, 4, 5, 4, 3});
  Tensor y = conv(x);
  CHECK(shape(y) == std::vector<int64_t>{2, 8, 5, 5, 4});
  Geometry g;
  g.padding = {1, 1, 1};
  g.groups = 2;
  check_close(y, direct_conv3d(x, conv->weight, conv->bias, g), 1e-4, 1e-4);
  y.sum().backward();
  CHECK(shape(conv->weight.grad()) == std::vector<int64_t>{8, 2, 3, 2, 2});
  CHECK(shape(conv->bias.grad()) == std::vector<int64_t>{8});
  CHECK(shape(conv(randn({4, 3, 3, 3}))) == std::vector<int64_t>{8, 3, 4, 4});
  nn::Conv3d nob(nn::Conv3dOptions(1, 2, 1).bias(false));
  CHECK(!nob->bias.defined());
  CHECK(nob->parameters().size() == 1);

  nn::ConvTranspose3d tconv(nn::ConvTranspose3dOptions(4, 6, 2).stride(2).groups(2));
  CHECK(shape(tconv->weight) == std::vector<int64_t>{4, 3, 2, 2, 2});
  CHECK(shape(tconv->bias) == std::vector<int64_t>{6});
  Tensor xt = randn({1, 4, 2, 3, 2});
  Tensor yt = tconv(xt);
  CHECK(shape(yt) == std::vector<int64_t>{1, 6, 4, 6, 4});
  Geometry t;
  t.stride = {2, 2, 2};
  t.groups = 2;
  check_close(yt, direct_conv_transpose3d(xt, tconv->weight, tconv->bias, t), 1e-4, 1e-4);
  // output_size picks output_padding (spatial sizes, or with batch and channels).
  CHECK(shape(tconv(xt, std::vector<int64_t>{5, 7, 5})) == std::vector<int64_t>{1, 6, 5, 7, 5});
  CHECK(shape(tconv(xt, std::vector<int64_t>{1, 6, 4, 7, 5})) == std::vector<int64_t>{1, 6, 4, 7, 5});
  check_error(
      [&] {
        tconv(xt, std::vector<int64_t>{6, 6, 4});
      },
      "requested an output size of [6, 6, 4], but valid sizes range from [4, 6, 4] to [5, 7, 5]");
  // reset_parameters() draws new values into the same parameters.
  Tensor before = conv->weight.clone();
  conv->reset_parameters();
  CHECK(!equal(before, conv->weight));
  CHECK(conv->weight.abs().max().item<double>() <= bound);
}

TEST_CASE("test_conv3d_modules: Python's repr and option defaults") {
  CHECK(repr(nn::Conv3d(2, 4, 3)) == "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  CHECK(repr(nn::Conv3d(
            nn::Conv3dOptions(2, 4, {1, 2, 3}).stride(2).padding(1).groups(2).bias(false).dilation(2))) ==
        "Conv3d(2, 4, kernel_size=(1, 2, 3), stride=(2, 2, 2), padding=(1, 1, 1), dilation=(2, 2, 2), "
        "groups=2, "
        "bias=False)");
  CHECK(repr(nn::Conv3d(nn::Conv3dOptions(2, 4, 3).padding(kSame))) ==
        "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=same)");
  CHECK(repr(nn::ConvTranspose3d(nn::ConvTranspose3dOptions(2, 4, 3).output_padding(1).stride(2))) ==
        "ConvTranspose3d(2, 4, kernel_size=(3, 3, 3), stride=(2, 2, 2), output_padding=(1, 1, 1))");

  nn::Conv3dOptions o(1, 2, 3);
  CHECK(o.stride() == ExpandingArray<3>(1));
  CHECK(std::get<ExpandingArray<3>>(o.padding()) == ExpandingArray<3>(0));
  CHECK(o.dilation() == ExpandingArray<3>(1));
  CHECK(o.groups() == 1);
  CHECK(o.bias());
  CHECK(std::holds_alternative<enumtype::kZeros>(o.padding_mode()));
  nn::ConvTranspose3dOptions t(1, 2, 3);
  CHECK(t.output_padding() == ExpandingArray<3>(0));
  CHECK(t.padding() == ExpandingArray<3>(0));
  CHECK(t.dilation() == ExpandingArray<3>(1));
  F::Conv3dFuncOptions f;
  CHECK(!f.bias().defined());
  CHECK(f.stride() == ExpandingArray<3>(1));
  F::ConvTranspose3dFuncOptions ft;
  CHECK(ft.groups() == 1);
  CHECK(ft.output_padding() == ExpandingArray<3>(0));
}

TEST_CASE("test_conv3d_modules: PyTorch's errors") {
  check_error(
      [] {
        F::conv3d(randn({2, 3, 4}), randn({2, 3, 1, 1, 1}));
      },
      "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: [2, 3, 4]");
  check_error(
      [] {
        F::conv_transpose3d(randn({3, 4}), randn({2, 3, 1, 1, 1}));
      },
      "Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of size: [3, 4]");
  check_error(
      [] {
        F::conv3d(randn({1, 3, 2, 2, 2}), randn({2, 3, 3, 3, 3}));
      },
      "Calculated padded input size per channel: (2 x 2 x 2). Kernel size: (3 x 3 x 3). Kernel size can't be "
      "greater than actual input size");
  check_error(
      [] {
        F::conv3d(randn({1, 3, 2, 2, 2}), randn({2, 3, 1, 1, 1}), F::Conv3dFuncOptions().dilation(0));
      },
      "dilation should be greater than zero, but got [0, 0, 0]");
  check_error(
      [] {
        F::conv3d(randn({1, 3, 2, 2, 2}).to(kBool), randn({2, 3, 1, 1, 1}).to(kBool));
      },
      "\"slow_conv3d_cpu\" not implemented for 'Bool'");
  check_error(
      [] {
        F::conv3d(randn({1, 3, 2, 2, 2}), randn({2, 3, 1, 1, 1}, kDouble));
      },
      "expected scalar type Float but found Double");
  check_error(
      [] {
        F::conv_transpose3d(randn({1, 3, 2, 2, 2}), randn({3, 2, 1, 1, 1}),
                            F::ConvTranspose3dFuncOptions().output_padding(1));
      },
      "output padding must be smaller than either stride or dilation, but got output_padding_depth: 1 "
      "output_padding_height: 1 output_padding_width: 1 stride_depth: 1 stride_height: 1 stride_width: 1 "
      "dilation_depth: 1 dilation_height: 1 dilation_width: 1");
  check_error(
      [] {
        F::conv_transpose3d(randn({1, 3, 1, 1, 1}), randn({3, 2, 1, 1, 1}),
                            F::ConvTranspose3dFuncOptions().padding(1));
      },
      "Given input size per channel: (1 x 1 x 1). Calculated output size per channel: (-1 x -1 x -1). Output "
      "size is "
      "too small");
  check_error(
      [] {
        F::conv_transpose3d(randn({1, 3, 2, 2, 2}), randn({3, 2, 1, 1, 1}),
                            F::ConvTranspose3dFuncOptions().dilation(0));
      },
      "dilation should be greater than zero, but got dilation_depth: 0, dilation_height: 0, dilation_width: "
      "0");
  check_error(
      [] {
        F::conv_transpose3d(randn({1, 3, 2, 2, 2}).to(kBool), randn({3, 2, 1, 1, 1}).to(kBool));
      },
      "\"slow_conv_transpose3d_out_cpu\" not implemented for 'Bool'");
  check_error([] { nn::Conv3d(nn::Conv3dOptions(3, 4, 2).groups(2)); },
              "in_channels must be divisible by groups");
  check_error([] { nn::ConvTranspose3d(nn::ConvTranspose3dOptions(2, 4, 2).padding_mode(kReflect)); },
              "Only \"zeros\" padding mode is supported for ConvTranspose3d");
}
