// affine_grid and grid_sample against PyTorch's outputs and gradients (fixtures/make_vision_fixture.py:
// every mode and padding mode, 2-d and 3-d, aligned or not), hand-worked cases (the identity
// grid reproduces the image; a grid shifted by one pixel reads zeros past the edge), float64
// gradcheck, PyTorch's errors; gumbel_softmax's rows, hard one-hot and straight-through gradient.
#include <string>
#include <vector>

#include "ember/autograd/gradcheck.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/vision.h"
#include "nn/fixtures/vision_fixture.h"
#include "op_check.h"

using namespace ember;
namespace F = ember::nn::functional;
namespace fx = ember::test::vision_fixture;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::seq;
using ember::test::values;

namespace {
F::GridSampleFuncOptions options_of(bool nearest, const std::string& padding, bool align_corners) {
  F::GridSampleFuncOptions o;
  if (nearest) o.mode(kNearest);
  if (padding == "border") o.padding_mode(kBorder);
  if (padding == "reflection") o.padding_mode(kReflection);
  return o.align_corners(align_corners);
}
}  // namespace

TEST_CASE("grid_sample matches PyTorch's outputs and gradients for every mode and padding") {
  for (const auto& c : fx::kCases) {
    CAPTURE(c.name);
    Tensor x = c.dims == 2 ? from_values(fx::kInput2d, {2, 3, 4, 5}) : from_values(fx::kInput3d, {1, 2, 3, 4, 5});
    Tensor g = c.dims == 2 ? from_values(fx::kGrid2d, {2, 3, 4, 2}) : from_values(fx::kGrid3d, {1, 2, 3, 4, 3});
    x.requires_grad_();
    g.requires_grad_();
    Tensor y = F::grid_sample(x, g, options_of(c.nearest, c.padding_mode, c.align_corners));
    check_close(y, c.output, 1e-12, 1e-12);
    Tensor w = arange(y.numel(), kDouble).reshape(y.sizes()) * 0.1;
    (y * w).sum().backward();
    check_close(x.grad(), c.grad_input, 1e-12, 1e-12);
    if (!c.nearest) check_close(g.grad(), c.grad_grid, 1e-10, 1e-10);
  }
}

TEST_CASE("affine_grid matches PyTorch's grids, 2-d and 3-d") {
  Tensor t2 = from_values(fx::kTheta2d, {1, 2, 3}), t3 = from_values(fx::kTheta3d, {1, 3, 4});
  check_close(F::affine_grid(t2, {1, 1, 3, 4}), fx::kAffine2d, 1e-14, 1e-14);
  check_close(F::affine_grid(t2, {1, 1, 3, 4}, true), fx::kAffine2dAligned, 1e-14, 1e-14);
  check_close(F::affine_grid(t3, {1, 1, 2, 3, 2}), fx::kAffine3d, 1e-14, 1e-14);
  check_close(F::affine_grid(t3, {1, 1, 2, 3, 2}, true), fx::kAffine3dAligned, 1e-14, 1e-14);
  check_error([&] { F::affine_grid(t2, {1, 1, 2, 3, 2}); }, "Expected a batch of 3D affine matrices of shape Nx3x4");
  check_error([&] { F::affine_grid(t2, {1, 4}); }, "affine_grid only supports 4D and 5D sizes");
  check_error([&] { F::affine_grid(t2, {1, 1, 0, 3}); }, "Expected non-zero, positive output size.");
}

TEST_CASE("grid_sample by hand: the identity grid, a one-pixel shift, nearest rounding") {
  Tensor image = seq({1, 1, 3, 4});
  Tensor identity = F::affine_grid(from_values({1, 0, 0, 0, 1, 0}, {1, 2, 3}), {1, 1, 3, 4});
  check_close(F::grid_sample(image, identity), values(image), 1e-12);
  // Shift right by one pixel (2 / W in grid units): each row reads its next pixel, zero past the edge.
  Tensor shifted = F::affine_grid(from_values({1, 0, 0.5, 0, 1, 0}, {1, 2, 3}), {1, 1, 3, 4});
  check_close(F::grid_sample(image, shifted), {1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0}, 1e-12);
  // ... and with border padding the last column repeats.
  check_close(F::grid_sample(image, shifted, F::GridSampleFuncOptions().padding_mode(kBorder)),
              {1, 2, 3, 3, 5, 6, 7, 7, 9, 10, 11, 11}, 1e-12);
  // Nearest rounds half to even: x = 0.5 and 1.5 (aligned, W = 5: x = 2 (g + 1)) read pixels 0 and 2.
  Tensor row = seq({1, 1, 1, 5});
  Tensor half = from_values({-0.75, 0, -0.25, 0}, {1, 1, 2, 2});
  CHECK(values(F::grid_sample(row, half, F::GridSampleFuncOptions().mode(kNearest).align_corners(true))) ==
        std::vector<double>{0, 2});
}

TEST_CASE("grid_sample passes float64 gradcheck for input and grid") {
  manual_seed(3);
  for (const std::string padding : {"zeros", "border", "reflection"}) {
    CAPTURE(padding);
    Tensor x = ember::test::rand_leaf({1, 2, 3, 4});
    Tensor g = ember::test::rand_leaf({1, 2, 3, 2}, -0.9, 0.9);
    auto o = options_of(false, padding, false);
    CHECK(autograd::gradcheck([&](const TensorList& in) { return TensorList{F::grid_sample(in[0], in[1], o)}; },
                              {x, g}));
  }
}

TEST_CASE("grid_sample raises PyTorch's errors") {
  check_error([] { F::grid_sample(zeros({1, 1, 2, 2}), zeros({1, 2, 2})); },
              "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions");
  check_error([] { F::grid_sample(zeros({1, 1, 2, 2}), zeros({2, 2, 2, 2})); },
              "grid_sampler(): expected grid and input to have same batch size");
  check_error([] { F::grid_sample(zeros({1, 1, 2, 2}), zeros({1, 2, 2, 3})); },
              "grid_sampler(): expected grid to have size 2 in last dimension");
  check_error([] { F::grid_sample(zeros({1, 1, 2, 2}), zeros({1, 2, 2, 2}, kDouble)); },
              "grid_sampler(): expected input and grid to have same dtype");
}

TEST_CASE("gumbel_softmax: rows sum to one; hard gives one-hot forward and the soft gradient") {
  manual_seed(5);
  Tensor logits = from_values({1, 2, 3, 0, -1, 0.5}, {2, 3}).requires_grad_();
  Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5));
  check_close(soft.sum(1), {1, 1}, 1e-12);
  manual_seed(5);
  Tensor hard = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5).hard(true));
  std::vector<double> h = values(hard), s = values(soft);
  for (int r = 0; r < 2; ++r) {
    int argmax = 0;
    for (int k = 1; k < 3; ++k)
      if (s[r * 3 + k] > s[r * 3 + argmax]) argmax = k;
    for (int k = 0; k < 3; ++k) CHECK(h[r * 3 + k] == (k == argmax ? 1.0 : 0.0));
  }
  // Straight-through: the hard sample's gradient is the soft sample's (same noise, same seed).
  Tensor w = from_values({1, -2, 0.5, 3, 0, -1}, {2, 3});
  (hard * w).sum().backward();
  std::vector<double> hard_grad = values(logits.grad());
  logits.mutable_grad() = Tensor();
  (soft * w).sum().backward();
  check_close(logits.grad(), hard_grad, 1e-12);
}
