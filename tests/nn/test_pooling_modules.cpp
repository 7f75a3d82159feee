// Pooling modules (nn/modules/pooling.h) and the functional forms of pooling, padding and
// interpolation (nn/functional/{pooling,padding,upsampling}.h): options as libtorch spells
// them, results equal to the core ops (checked against references in tests/core), Python's
// reprs, and torch.nn.functional's argument errors.
#include <sstream>

#include "ember/nn/functional/padding.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/functional/upsampling.h"
#include "ember/nn/modules/pooling.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::seq;
using ember::test::shape;
namespace F = ember::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream s;
  s << m;
  return s.str();
}

}  // namespace

TEST_CASE("F:: pooling forwards the options to the core ops") {
  manual_seed(0);
  Tensor x = rand({2, 3, 7, 8}, kDouble);
  check_close(F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true)),
              max_pool2d(x, 3, 2, 1, 1, true));
  check_close(F::max_pool2d(x, F::MaxPool2dFuncOptions({3, 2}).dilation({1, 2})),
              max_pool2d(x, {3, 2}, {3, 2}, 0, {1, 2}));
  check_close(std::get<1>(F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(2))),
              std::get<1>(max_pool2d_with_indices(x, 2)));
  check_close(F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(1).padding(1).count_include_pad(false)),
              avg_pool2d(x, 3, 1, 1, false, false));
  check_close(F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).divisor_override(3)), avg_pool2d(x, 2, {}, 0, false, true, 3));
  check_close(F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({3, 4})), adaptive_avg_pool2d(x, {3, 4}));
  // None keeps that dim's input size.
  CHECK(shape(F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({3, std::nullopt}))) ==
        std::vector<int64_t>{2, 3, 3, 8});
  check_close(F::adaptive_max_pool2d(x, F::AdaptiveMaxPool2dFuncOptions(2)), std::get<0>(adaptive_max_pool2d(x, {2, 2})));
  Tensor y = x.flatten(2);
  check_close(F::max_pool1d(y, F::MaxPool1dFuncOptions(4).stride(3)), max_pool1d(y, 4, 3));
  check_close(F::avg_pool1d(y, F::AvgPool1dFuncOptions(4)), avg_pool1d(y, 4));
  check_close(F::adaptive_avg_pool1d(y, F::AdaptiveAvgPool1dFuncOptions(5)), adaptive_avg_pool1d(y, 5));
}

TEST_CASE("pooling modules: forward, indices, repr") {
  manual_seed(1);
  Tensor x = rand({2, 3, 6, 6}, kDouble);
  nn::MaxPool2d pool(nn::MaxPool2dOptions(2));
  check_close(pool(x), max_pool2d(x, 2));
  check_close(std::get<1>(pool->forward_with_indices(x)), std::get<1>(max_pool2d_with_indices(x, 2)));
  CHECK(repr(pool) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  nn::MaxPool2d rect(nn::MaxPool2dOptions({3, 2}).stride(1).padding({1, 0}).ceil_mode(true));
  CHECK(repr(rect) == "MaxPool2d(kernel_size=(3, 2), stride=1, padding=(1, 0), dilation=1, ceil_mode=True)");
  check_close(rect(x), max_pool2d(x, {3, 2}, 1, {1, 0}, 1, true));

  nn::AvgPool2d avg(nn::AvgPool2dOptions(3).stride(2).padding(1));
  check_close(avg(x), avg_pool2d(x, 3, 2, 1));
  CHECK(repr(avg) == "AvgPool2d(kernel_size=3, stride=2, padding=1)");

  nn::AdaptiveAvgPool2d gap(nn::AdaptiveAvgPool2dOptions(1));
  check_close(gap(x).flatten(), x.mean({2, 3}).flatten());
  CHECK(repr(gap) == "AdaptiveAvgPool2d(output_size=1)");
  CHECK(repr(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({5, 7}))) == "AdaptiveAvgPool2d(output_size=(5, 7))");
  CHECK(repr(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({std::nullopt, 7}))) ==
        "AdaptiveAvgPool2d(output_size=(None, 7))");

  nn::AdaptiveMaxPool2d amp(nn::AdaptiveMaxPool2dOptions({2, 3}));
  check_close(amp(x), std::get<0>(adaptive_max_pool2d(x, {2, 3})));
  check_close(std::get<1>(amp->forward_with_indices(x)), std::get<1>(adaptive_max_pool2d(x, {2, 3})));
  CHECK(repr(amp) == "AdaptiveMaxPool2d(output_size=(2, 3))");

  Tensor y = x.flatten(2);
  nn::MaxPool1d mp1(nn::MaxPool1dOptions(3).stride(2));
  check_close(mp1(y), max_pool1d(y, 3, 2));
  CHECK(repr(mp1) == "MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)");
  nn::AvgPool1d ap1(nn::AvgPool1dOptions(2));
  check_close(ap1(y), avg_pool1d(y, 2));
  CHECK(repr(ap1) == "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))");
  nn::AdaptiveAvgPool1d aap1(nn::AdaptiveAvgPool1dOptions(4));
  check_close(aap1(y), adaptive_avg_pool1d(y, 4));
  CHECK(repr(aap1) == "AdaptiveAvgPool1d(output_size=4)");

  // Modules have no parameters; clone gives an equal, independent module; gradients flow.
  CHECK(pool->parameters().empty());
  auto copy = std::dynamic_pointer_cast<nn::MaxPool2dImpl>(pool->clone());
  REQUIRE(copy);
  CHECK(copy->options.kernel_size()[0] == 2);
  Tensor leaf = x.detach().requires_grad_(true);
  avg(leaf).sum().backward();
  CHECK(leaf.grad().defined());
}

TEST_CASE("F::pad: modes, value, errors") {
  Tensor x = seq({1, 1, 3, 3});
  check_close(F::pad(x, F::PadFuncOptions({1, 1, 2, 2}).mode(kReflect)), pad(x, {1, 1, 2, 2}, "reflect"));
  check_close(F::pad(x, F::PadFuncOptions({1, 1, 2, 2}).mode(kReflect).value(0)), pad(x, {1, 1, 2, 2}, "reflect"));
  check_close(F::pad(x[0], F::PadFuncOptions({1, 0}).mode(kReplicate)), pad(x[0], {1, 0}, "replicate"));
  check_close(F::pad(x, F::PadFuncOptions({2, 1, 1, 2}).mode(kCircular)), pad(x, {2, 1, 1, 2}, "circular"));
  check_close(F::pad(x, F::PadFuncOptions({1, 1}).value(-2)), pad(x, {1, 1}, "constant", -2.0));
  // The default mode is constant with 0: [[0,1,2]] -> [[0,0,1,2,0]].
  check_close(F::pad(from_values({0, 1, 2}, {1, 3}), F::PadFuncOptions({1, 1})), {0, 0, 1, 2, 0});
  check_error([&] { F::pad(x, F::PadFuncOptions({1, 1}).mode(kReflect).value(1)); },
              "Padding mode \"reflect\" doesn't take in value argument");
  check_error([&] { F::pad(x, F::PadFuncOptions({3, 3, 0, 0}).mode(kReflect)); },
              "Padding size should be less than the corresponding input dimension, but got: padding (3, 3) at "
              "dimension 3 of input [1, 1, 3, 3]");
  check_error([&] { F::pad(x, F::PadFuncOptions({1, 1, 1})); }, "Padding length must be divisible by 2");
}

TEST_CASE("F::interpolate: sizes, scale factors, modes and Python's checks") {
  manual_seed(2);
  Tensor x = rand({2, 3, 4, 5}, kDouble);
  using IFO = F::InterpolateFuncOptions;
  check_close(F::interpolate(x, IFO().size(std::vector<int64_t>{8, 10})), upsample_nearest2d(x, {8, 10}));
  check_close(F::interpolate(x, IFO().size(std::vector<int64_t>{7, 3}).mode(kBilinear).align_corners(true)),
              upsample_bilinear2d(x, {7, 3}, true));
  check_close(F::interpolate(x, IFO().size(std::vector<int64_t>{7, 3}).mode(kBilinear)),
              upsample_bilinear2d(x, {7, 3}, false));
  // scale_factor 1.7: output floor(4 * 1.7) x floor(5 * 1.7) = 6 x 8, sampled with the given scale ...
  Tensor s = F::interpolate(x, IFO().scale_factor(std::vector<double>{1.7, 1.7}).mode(kBilinear));
  CHECK(shape(s) == std::vector<int64_t>{2, 3, 6, 8});
  check_close(s, upsample_bilinear2d(x, {6, 8}, false, 1.7, 1.7));
  // ... or with the scale recomputed from the sizes.
  check_close(F::interpolate(x, IFO().scale_factor(std::vector<double>{1.7, 1.7}).mode(kBilinear)
                                    .recompute_scale_factor(true)),
              upsample_bilinear2d(x, {6, 8}, false));
  Tensor y = x.flatten(2);
  check_close(F::interpolate(y, IFO().size(std::vector<int64_t>{31}).mode(kLinear)), upsample_linear1d(y, {31}, false));
  check_close(F::interpolate(y, IFO().scale_factor(std::vector<double>{2})), upsample_nearest1d(y, {40}, 2.0));

  check_error([&] { F::interpolate(x, IFO()); }, "either size or scale_factor should be defined");
  check_error([&] { F::interpolate(x, IFO().size(std::vector<int64_t>{2, 2}).scale_factor(std::vector<double>{2, 2})); },
              "only one of size or scale_factor should be defined");
  check_error([&] { F::interpolate(x, IFO().size(std::vector<int64_t>{2, 2}).align_corners(true)); },
              "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
              "trilinear");
  check_error([&] { F::interpolate(x, IFO().size(std::vector<int64_t>{2, 2, 2})); },
              "Input and output must have the same number of spatial dimensions, but got input with spatial "
              "dimensions of [4, 5] and output size of [2, 2, 2]");
  check_error([&] { F::interpolate(x, IFO().scale_factor(std::vector<double>{2})); },
              "Input and scale_factor must have the same number of spatial dimensions");
  check_error([&] { F::interpolate(y, IFO().size(std::vector<int64_t>{2}).mode(kBilinear)); },
              "Got 3D input, but bilinear mode needs 4D input");
  check_error([&] { F::interpolate(x, IFO().size(std::vector<int64_t>{2, 2}).mode(kLinear)); },
              "Got 4D input, but linear mode needs 3D input");
  check_error([&] { F::interpolate(x, IFO().size(std::vector<int64_t>{2, 2}).recompute_scale_factor(true)); },
              "recompute_scale_factor is not meaningful with an explicit size.");
}
