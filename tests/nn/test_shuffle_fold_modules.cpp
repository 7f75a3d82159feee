// PixelShuffle / PixelUnshuffle and Fold / Unfold (nn/modules/{pixelshuffle,fold}.h) with their
// functional forms: hand-worked and PyTorch numbers (tests/nn/fixtures/
// make_shuffle_fold_expected.py), float64 gradcheck, reprs, option defaults and errors.
#include "ember/core/ops/fold.h"
#include "ember/core/ops/pixel_shuffle.h"
#include "ember/nn/functional/fold.h"
#include "ember/nn/functional/pixelshuffle.h"
#include "ember/nn/modules/fold.h"
#include "ember/nn/modules/pixelshuffle.h"
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

TEST_CASE("pixel_shuffle: channel blocks move into space and back") {
  // Channel c * 4 + i * 2 + j of a 2 x 2 block lands at (2h + i, 2w + j).
  Tensor x = seq({1, 8, 1, 1});
  check_close(F::pixel_shuffle(x, 2), {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(shape(F::pixel_shuffle(x, 2)) == std::vector<int64_t>{1, 2, 2, 2});
  // tests/nn/fixtures/make_shuffle_fold_expected.py
  check_close(F::pixel_unshuffle(seq({1, 1, 4, 4}), 2),
              {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15});
  manual_seed(0);
  Tensor y = rand({2, 3, 18, 2, 3}, kDouble);  // two batch dims
  CHECK(shape(nn::PixelShuffle(3)(y)) == std::vector<int64_t>{2, 3, 2, 6, 9});
  check_close(nn::PixelUnshuffle(3)(nn::PixelShuffle(3)(y)), y, 0);
  Tensor u = rand({4, 6, 4}, kDouble);  // unbatched
  check_close(F::pixel_shuffle(F::pixel_unshuffle(u, 2), 2), u, 0);
  Tensor a = rand_leaf({2, 8, 2, 3}), b = rand_leaf({2, 2, 4, 6});
  check_grad([](const TensorList& t) { return pixel_shuffle(t[0], 2); }, {a});
  check_grad([](const TensorList& t) { return pixel_unshuffle(t[0], 2); }, {b});
}

TEST_CASE("pixel_shuffle: reprs, options, PyTorch's errors") {
  CHECK(repr(*nn::PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)");
  CHECK(repr(*nn::PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)");
  CHECK(nn::PixelShuffleOptions(2).upscale_factor(4).upscale_factor() == 4);
  CHECK(F::PixelUnshuffleFuncOptions(3).downscale_factor() == 3);
  CHECK(nn::PixelShuffle(2)->parameters().empty());
  check_error(
      [] {
        pixel_shuffle(seq({4, 4}), 2);
      },
      "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)");
  check_error(
      [] {
        pixel_shuffle(seq({5, 4, 4}), 2);
      },
      "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
      "upscale_factor, but input.size(-3)=5 is not divisible by 4");
  check_error(
      [] {
        pixel_shuffle(seq({4, 4, 4}), 0);
      },
      "pixel_shuffle expects a positive upscale_factor, but got 0");
  check_error(
      [] {
        pixel_unshuffle(seq({4, 4}), 2);
      },
      "pixel_unshuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)");
  check_error(
      [] {
        pixel_unshuffle(seq({1, 5, 4}), 2);
      },
      "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=5 is not "
      "divisible by 2");
  check_error(
      [] {
        pixel_unshuffle(seq({1, 4, 5}), 2);
      },
      "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=5 is not "
      "divisible by 2");
  check_error(
      [] {
        pixel_unshuffle(seq({1, 4, 4}), -1);
      },
      "pixel_unshuffle expects a positive downscale_factor, but got -1");
}

TEST_CASE("unfold / fold: hand-worked and PyTorch numbers") {
  // 1 x 1 x 3 x 3 image, 2 x 2 blocks, stride 1: four blocks, row i * 2 + j is tap (i, j).
  Tensor img = seq({1, 1, 3, 3});
  check_close(F::unfold(img, F::UnfoldFuncOptions(2)), {0, 1, 3, 4, 1, 2, 4, 5, 3, 4, 6, 7, 4, 5, 7, 8});
  // Folding the blocks back counts each pixel once per block covering it: 1 2 1 / 2 4 2 / 1 2 1.
  Tensor ones_img = ones({1, 1, 3, 3}, kDouble);
  check_close(F::fold(F::unfold(ones_img, F::UnfoldFuncOptions(2)), F::FoldFuncOptions(3, 2)),
              {1, 2, 1, 2, 4, 2, 1, 2, 1});
  // tests/nn/fixtures/make_shuffle_fold_expected.py
  Tensor x = seq({1, 2, 3, 4});
  auto uo = F::UnfoldFuncOptions(2).dilation({1, 2}).padding({1, 0}).stride({2, 1});
  Tensor cols = F::unfold(x, uo);
  CHECK(shape(cols) == std::vector<int64_t>{1, 8, 4});
  check_close(cols, {0, 0, 4,  5,  0, 0, 6,  7,  0,  1,  8,  9,  2,  3,  10, 11,
                     0, 0, 16, 17, 0, 0, 18, 19, 12, 13, 20, 21, 14, 15, 22, 23});
  auto fo = F::FoldFuncOptions({3, 4}, 2).dilation({1, 2}).padding({1, 0}).stride({2, 1});
  check_close(F::fold(seq({1, 8, 4}), fo),
              {8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 24, 25, 28, 29, 18, 19, 22, 23, 26, 27, 30, 31});
  // Unbatched forms.
  check_close(F::unfold(x[0], uo), cols[0]);
  check_close(F::fold(seq({8, 4}), fo), F::fold(seq({1, 8, 4}), fo)[0]);
  // Modules forward to the functional forms.
  nn::Unfold unfold(nn::UnfoldOptions(2).dilation({1, 2}).padding({1, 0}).stride({2, 1}));
  check_close(unfold(x), cols);
  nn::Fold fold(nn::FoldOptions({3, 4}, 2).dilation({1, 2}).padding({1, 0}).stride({2, 1}));
  check_close(fold(seq({1, 8, 4})), F::fold(seq({1, 8, 4}), fo));
}

TEST_CASE("unfold / fold: gradcheck, and fold is unfold's adjoint") {
  manual_seed(3);
  Tensor x = rand_leaf({2, 2, 5, 4});
  auto uo = F::UnfoldFuncOptions({2, 3}).dilation({2, 1}).padding(1).stride({1, 2});
  check_grad([&](const TensorList& t) { return F::unfold(t[0], uo); }, {x});
  check_gradgrad([&](const TensorList& t) { return F::unfold(t[0], uo); }, {x});
  Tensor cols = F::unfold(x, uo).detach();
  Tensor c = rand_leaf(cols.sizes());
  auto fo = F::FoldFuncOptions({5, 4}, {2, 3}).dilation({2, 1}).padding(1).stride({1, 2});
  check_grad([&](const TensorList& t) { return F::fold(t[0], fo); }, {c});
  check_gradgrad([&](const TensorList& t) { return F::fold(t[0], fo); }, {c});
  // <unfold(x), c> == <x, fold(c)>
  Tensor y = x.detach();
  CHECK((F::unfold(y, uo) * c.detach()).sum().item<double>() ==
        doctest::Approx((y * F::fold(c.detach(), fo)).sum().item<double>()).epsilon(1e-12));
}

TEST_CASE("fold / unfold: reprs, option defaults, PyTorch's errors") {
  CHECK(repr(*nn::Fold(nn::FoldOptions({4, 5}, 2))) ==
        "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)");
  CHECK(repr(*nn::Fold(nn::FoldOptions(4, {2, 3}).dilation(2).padding(1).stride({1, 2}))) ==
        "Fold(output_size=4, kernel_size=(2, 3), dilation=2, padding=1, stride=(1, 2))");
  CHECK(repr(*nn::Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)");
  CHECK(repr(*nn::Unfold(nn::UnfoldOptions({2, 3}).dilation({1, 2}).padding(1).stride(2))) ==
        "Unfold(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=2)");
  nn::FoldOptions o({3, 4}, 2);
  CHECK(o.dilation().vec() == std::vector<int64_t>{1, 1});
  CHECK(o.padding().vec() == std::vector<int64_t>{0, 0});
  CHECK(o.stride().vec() == std::vector<int64_t>{1, 1});
  CHECK(nn::UnfoldOptions(3).kernel_size().vec() == std::vector<int64_t>{3, 3});

  check_error(
      [] {
        F::unfold(seq({2, 3, 4, 4, 4}), F::UnfoldFuncOptions(2));
      },
      "Input Error: Only 3D or 4D input Tensors are supported (got 5D)");
  check_error(
      [] {
        im2col(seq({2, 0, 4, 4}), {2, 2}, {1, 1}, {0, 0}, {1, 1});
      },
      "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
      "input, but got: [2, 0, 4, 4]");
  check_error(
      [] {
        F::unfold(seq({2, 3, 4, 4}), F::UnfoldFuncOptions(5));
      },
      "Given input with spatial size (4, 4), kernel_size=(5, 5), dilation=(1, 1), padding=(0, 0), calculated "
      "shape of the array of sliding blocks as (0, 0), but its components must be at least one.");
  check_error(
      [] {
        F::unfold(seq({2, 3, 4, 4}), F::UnfoldFuncOptions(0));
      },
      "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0");
  check_error(
      [] {
        F::unfold(seq({2, 3, 4, 4}), F::UnfoldFuncOptions(2).stride(0));
      },
      "stride should be greater than zero, but got stride_height: 0 stride_width: 0");
  check_error(
      [] {
        F::unfold(seq({2, 3, 4, 4}), F::UnfoldFuncOptions(2).dilation(0));
      },
      "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0");
  check_error(
      [] {
        F::unfold(seq({2, 3, 4, 4}), F::UnfoldFuncOptions(2).padding(-1));
      },
      "padding should be non-negative, but got pad_height: -1 pad_width: -1");
  check_error(
      [] {
        F::fold(seq({2, 12, 9, 1}), F::FoldFuncOptions(4, 2));
      },
      "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got 4D)");
  check_error(
      [] {
        col2im(seq({2, 12, 9, 1}), {4, 4}, {2, 2}, {1, 1}, {0, 0}, {1, 1});
      },
      "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
      "for "
      "input, but got: [2, 12, 9, 1]");
  check_error(
      [] {
        F::fold(seq({2, 13, 9}), F::FoldFuncOptions(4, 2));
      },
      "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
      "input.size(1)=13 and kernel_size=(2, 2).");
  check_error(
      [] {
        F::fold(seq({2, 12, 8}), F::FoldFuncOptions(4, 2));
      },
      "Given output_size=(4, 4), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), "
      "expected size of input's dimension 2 to match the calculated number of sliding blocks 3 * 3 = 9, but "
      "got input.size(2)=8.");
  check_error(
      [] {
        F::fold(seq({2, 12, 9}), F::FoldFuncOptions(4, 2).stride(0));
      },
      "stride should be greater than zero, but got stride_height: 0 stride_width: 0");
}
