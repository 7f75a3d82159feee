// Upsample (nn/modules/upsampling.h) and the interpolate modes it reaches: bicubic (4-d),
// nearest and trilinear (5-d) against PyTorch's numbers (tests/nn/fixtures/
// make_upsample_expected.py), float64 gradcheck, reprs, option defaults and Python's errors.
#include "ember/core/ops/upsample.h"
#include "ember/nn/functional/upsampling.h"
#include "ember/nn/modules/upsampling.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;
using ember::test::repr;
using ember::test::seq;
using ember::test::shape;
namespace F = ember::nn::functional;

TEST_CASE("interpolate bicubic, trilinear and 5-d nearest: PyTorch numbers") {
  Tensor x = seq({1, 1, 3, 4}).pow(2) / 10;
  auto bicubic = F::InterpolateFuncOptions().size(std::vector<int64_t>{5, 3}).mode(kBicubic);
  check_close(F::interpolate(x, bicubic.align_corners(false)),
              {-0.15414537037, -0.0563, 0.459137962963, 0.316236111111, 0.8669, 1.835156481481,
               1.710069444444, 3.0125, 4.732523148148, 4.831902777778, 6.8861, 9.357889814815, 7.081484259259,
               9.5885, 12.513108333333},
              1e-10);
  check_close(F::interpolate(x, bicubic.align_corners(true)),
              {0.0, 0.2125, 0.9, 0.35, 1.05, 2.225, 1.6, 3.0125, 4.9, 4.15, 6.275, 8.875, 6.4, 9.0125, 12.1},
              1e-10);
  check_close(
      F::interpolate(x,
                     F::InterpolateFuncOptions().scale_factor(std::vector<double>{1.5, 1.5}).mode(kBicubic)),
      {-0.141541280864, -0.145225694444, -0.080066872428, 0.05228909465,  0.359114583333,  0.590152391975,
       0.313107638889,  0.50390625,      0.887268518519,  1.246064814815, 1.87109375,      2.296614583333,
       2.333658050412,  2.849508101852,  3.764703360768,  4.501963305898, 5.658825231481,  6.409397505144,
       5.600080375514,  6.369762731481,  7.700265775034,  8.733067558299, 10.305237268519, 11.309641846708},
      1e-10);
  // float input: the same numbers to float precision.
  auto bicubic_f = F::InterpolateFuncOptions().size(std::vector<int64_t>{5, 3}).mode(kBicubic);
  check_close(F::interpolate(x.to(kFloat), bicubic_f), F::interpolate(x, bicubic_f), 1e-5);
  Tensor y = seq({1, 1, 2, 2, 2}).pow(2);
  auto tri = F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 2, 3}).mode(kTrilinear);
  const std::vector<double> tri_expected{0.0,  0.5,  1.0,  4.0,  6.5,  9.0,  8.0,  10.5, 13.0,
                                         20.0, 24.5, 29.0, 16.0, 20.5, 25.0, 36.0, 42.5, 49.0};
  check_close(F::interpolate(y, tri.align_corners(false)), tri_expected, 1e-12);
  check_close(F::interpolate(y, tri.align_corners(true)), tri_expected, 1e-12);
  check_close(F::interpolate(y, F::InterpolateFuncOptions().scale_factor(std::vector<double>{1.5, 1, 2})),
              {0, 0, 1, 1, 4, 4, 9, 9, 0, 0, 1, 1, 4, 4, 9, 9, 16, 16, 25, 25, 36, 36, 49, 49});
  // Trilinear with one depth plane is bilinear.
  Tensor z = rand({2, 3, 1, 4, 5}, kDouble);
  check_close(upsample_trilinear3d(z, {1, 7, 3}, false).squeeze(2),
              upsample_bilinear2d(z.squeeze(2), {7, 3}, false), 1e-12);
}

TEST_CASE("bicubic, trilinear, nearest 3-d: gradcheck") {
  manual_seed(7);
  Tensor x = rand_leaf({1, 2, 3, 4});
  check_grad([](const TensorList& t) { return upsample_bicubic2d(t[0], {5, 3}, false); }, {x});
  check_grad([](const TensorList& t) { return upsample_bicubic2d(t[0], {6, 7}, true); }, {x});
  check_gradgrad([](const TensorList& t) { return upsample_bicubic2d(t[0], {4, 5}, false, 1.3, 1.2); }, {x});
  Tensor y = rand_leaf({1, 2, 2, 3, 2});
  check_grad([](const TensorList& t) { return upsample_trilinear3d(t[0], {3, 4, 5}, false); }, {y});
  check_grad([](const TensorList& t) { return upsample_trilinear3d(t[0], {4, 2, 3}, true); }, {y});
  check_grad([](const TensorList& t) { return upsample_nearest3d(t[0], {3, 5, 4}); }, {y});
}

TEST_CASE("Upsample: forward, reprs, option defaults") {
  manual_seed(8);
  Tensor x = rand({2, 3, 4, 5}, kDouble);
  nn::Upsample up(
      nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(kBilinear).align_corners(true));
  check_close(up(x), upsample_bilinear2d(x, {8, 10}, true, 2.0, 2.0));
  nn::Upsample cubic(nn::UpsampleOptions().size(std::vector<int64_t>{7, 3}).mode(kBicubic));
  check_close(cubic(x), upsample_bicubic2d(x, {7, 3}, false));
  Tensor v = rand({1, 2, 2, 3, 4}, kDouble);
  check_close(
      nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 1, 1}).mode(kTrilinear))(v),
      upsample_trilinear3d(v, {4, 3, 4}, false, 2.0, 1.0, 1.0));
  check_close(nn::Upsample(nn::UpsampleOptions().size(std::vector<int64_t>{9}).mode(kLinear))(x.flatten(2)),
              upsample_linear1d(x.flatten(2), {9}, false));

  CHECK(repr(*nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2}))) ==
        "Upsample(scale_factor=2.0, mode='nearest')");
  CHECK(repr(*nn::Upsample(
            nn::UpsampleOptions().size(std::vector<int64_t>{4, 5}).mode(kBilinear).align_corners(true))) ==
        "Upsample(size=(4, 5), mode='bilinear')");
  CHECK(repr(*nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 3}).mode(kBicubic))) ==
        "Upsample(scale_factor=(2.0, 3.0), mode='bicubic')");
  CHECK(repr(*nn::Upsample(nn::UpsampleOptions().size(std::vector<int64_t>{4}))) ==
        "Upsample(size=4, mode='nearest')");
  nn::UpsampleOptions o;
  CHECK(!o.size());
  CHECK(!o.scale_factor());
  CHECK(std::holds_alternative<enumtype::kNearest>(o.mode()));
  CHECK(!o.align_corners());
  CHECK(up->parameters().empty());
}

TEST_CASE("interpolate: Python's errors for the new modes") {
  Tensor x4 = seq({1, 1, 3, 3}), x5 = seq({1, 1, 2, 2, 2}), x3 = seq({1, 1, 3});
  auto sf = [](double s, auto mode) {
    return F::InterpolateFuncOptions().scale_factor(std::vector<double>(1, s)).mode(mode);
  };
  check_error(
      [&] {
        F::interpolate(x4,
                       F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(kTrilinear));
      },
      "Got 4D input, but trilinear mode needs 5D input");
  check_error([&] { F::interpolate(x3, sf(2, kTrilinear)); },
              "Got 3D input, but trilinear mode needs 5D input");
  check_error(
      [&] {
        F::interpolate(
            x5, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2, 2}).mode(kBilinear));
      },
      "Got 5D input, but bilinear mode needs 4D input");
  check_error(
      [&] {
        F::interpolate(x5,
                       F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2, 2}).mode(kLinear));
      },
      "Got 5D input, but linear mode needs 3D input");
  check_error(
      [&] {
        F::interpolate(x5,
                       F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2, 2}).mode(kBicubic));
      },
      "Input Error: Only 3D, 4D and 5D input Tensors supported (got 5D) for the modes: nearest | linear | "
      "bilinear | bicubic | trilinear | area | nearest-exact (got bicubic)");
  check_error(
      [&] {
        F::interpolate(x4, F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 4, 4}).mode(kTrilinear));
      },
      "Input and output must have the same number of spatial dimensions, but got input with spatial "
      "dimensions "
      "of [3, 3] and output size of [4, 4, 4].");
  check_error(
      [&] {
        upsample_trilinear3d(x4, {2, 2, 2}, false);
      },
      "It is expected input_size equals to 5, but got size 4");
  check_error(
      [&] {
        upsample_nearest3d(x5, {2, 2});
      },
      "It is expected output_size equals to 3, but got size 2");
}
