// Padding (core/ops/padding.cpp): constant / reflect / replicate / circular against PyTorch
// 1.13 numbers (tests/core/fixtures/make_resample_values.py) and a plain index loop written
// here, negative pads, 1-d and unbatched forms, float64 gradcheck (also non-contiguous),
// gradgradcheck, node names and PyTorch's error texts.
#include <string>

#include "ember/core/ops/padding.h"
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

/// Where output position o of a padded axis reads from: mirrored, clamped or wrapped.
int64_t source(int64_t o, int64_t left, int64_t n, const std::string& mode) {
  int64_t i = o - left;
  if (mode == "reflect") {
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  } else if (mode == "replicate") {
    i = i < 0 ? 0 : (i >= n ? n - 1 : i);
  } else {
    i = ((i % n) + n) % n;
  }
  return i;
}

/// Plain padding of the last two dims of x by {l, r, t, b}.
std::vector<double> pad_ref(const Tensor& x, std::vector<int64_t> p, const std::string& mode) {
  const int64_t H = x.size(-2), W = x.size(-1), oH = H + p[2] + p[3], oW = W + p[0] + p[1];
  std::vector<double> v = values(x), out;
  for (int64_t q = 0; q < x.numel() / (H * W); ++q)
    for (int64_t h = 0; h < oH; ++h)
      for (int64_t w = 0; w < oW; ++w)
        out.push_back(v[q * H * W + source(h, p[2], H, mode) * W + source(w, p[0], W, mode)]);
  return out;
}

Tensor noncontiguous_leaf(int64_t n, int64_t c, int64_t h, int64_t w) {
  Tensor t = test::rand_leaf({n, c, w, h}).detach().transpose(2, 3).requires_grad_(true);
  REQUIRE(!t.is_contiguous());
  return t;
}

}  // namespace

TEST_CASE("pad: PyTorch numbers for each mode") {
  Tensor x = seq({1, 1, 3, 3});
  check_close(pad(x, {2, 1, 1, 2}, "reflect"),
              {5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4, 8, 7, 6, 7, 8, 7, 5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1});
  check_close(pad(x, {2, 1, 1, 2}, "replicate"),
              {0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 6, 6, 7, 8, 8, 6, 6, 6, 7, 8, 8, 6, 6, 6, 7, 8, 8});
  check_close(pad(x, {2, 1, 1, 2}, "circular"),
              {7, 8, 6, 7, 8, 6, 1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3, 7, 8, 6, 7, 8, 6, 1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3});
  Tensor c = pad(x, {1, -1, 0, 1}, "constant", 9.0);  // a negative pad crops
  CHECK(shape(c) == std::vector<int64_t>{1, 1, 4, 3});
  check_close(c, {9, 0, 1, 9, 3, 4, 9, 6, 7, 9, 9, 9});
}

TEST_CASE("pad: matches a plain loop, batched, unbatched and 1-d") {
  manual_seed(0);
  Tensor x = rand({2, 3, 4, 5}, kDouble);
  for (std::string mode : {"reflect", "replicate", "circular"}) {
    for (std::vector<int64_t> p : {std::vector<int64_t>{1, 2, 3, 0}, {0, 0, 0, 0}, {-1, 3, 2, -2}, {4, 4, 3, 3}}) {
      if (mode == "reflect" && (p[0] >= 5 || p[1] >= 5 || p[2] >= 4 || p[3] >= 4)) continue;
      if (mode == "circular" && (p[0] > 5 || p[1] > 5 || p[2] > 4 || p[3] > 4)) continue;
      INFO(mode << " " << p[0] << p[1] << p[2] << p[3]);
      Tensor out = pad(x, p, mode);
      CHECK(shape(out) == std::vector<int64_t>{2, 3, 4 + p[2] + p[3], 5 + p[0] + p[1]});
      check_close(out, pad_ref(x, p, mode));
      check_close(pad(x.to(kFloat), p, mode), pad_ref(x, p, mode));
    }
  }
  // Unbatched (C, H, W) and the 1-d forms, which pad only the last dim.
  check_close(reflection_pad2d(x[0], {1, 1, 2, 2}), reflection_pad2d(x, {1, 1, 2, 2})[0]);
  check_close(replication_pad2d(x[0], {1, 1, 2, 2}), replication_pad2d(x, {1, 1, 2, 2})[0]);
  Tensor r = from_values({1, 2, 3}, {1, 3});
  check_close(reflection_pad1d(r, {2, 1}), {3, 2, 1, 2, 3, 2});
  check_close(replication_pad1d(r, {2, 1}), {1, 1, 1, 2, 3, 3});
  check_close(pad(r.unsqueeze(0), {1, 2}, "circular"), {3, 1, 2, 3, 1, 2});
  // Integer and bool tensors pad too (the gather copies any dtype).
  CHECK(values(pad(ember::tensor(std::vector<int64_t>{1, 2, 3}).view({1, 3}), {1, 1}, "reflect")) ==
        std::vector<double>{2, 1, 2, 3, 2});
}

TEST_CASE("constant_pad_nd: any number of dims, negative pads, values and dtypes") {
  Tensor x = seq({2, 3});
  // Pads the last dim by (1, 0) and the first by (0, 1) with -1.
  check_close(constant_pad_nd(x, {1, 0, 0, 1}, -1), {-1, 0, 1, 2, -1, 3, 4, 5, -1, -1, -1, -1});
  check_close(constant_pad_nd(x, {-1, -1}), {1, 4});  // pure crop
  CHECK(shape(constant_pad_nd(x, {-2, -1})) == std::vector<int64_t>{2, 0});
  CHECK(shape(pad(seq({2, 3, 4}), {1, 1})) == std::vector<int64_t>{2, 3, 6});
  Tensor i = constant_pad_nd(ember::tensor(std::vector<int64_t>{5, 6}), {1, 1}, 7);
  CHECK(i.dtype() == kLong);
  CHECK(values(i) == std::vector<double>{7, 5, 6, 7});
  CHECK(shape(constant_pad_nd(zeros({0, 3}), {1, 1, 2, 0})) == std::vector<int64_t>{2, 5});
}

TEST_CASE("pad: gradients") {
  manual_seed(1);
  for (std::string mode : {"constant", "reflect", "replicate", "circular"}) {
    INFO(mode);
    auto fn = [mode](const TensorList& in) { return pad(in[0], {2, -1, 1, 2}, mode); };
    check_grad(fn, {test::rand_leaf({2, 2, 4, 5})});
    check_grad(fn, {noncontiguous_leaf(1, 2, 4, 5)});
  }
  check_grad([](const TensorList& in) { return reflection_pad1d(in[0], {2, 3}); }, {test::rand_leaf({2, 5})});
  check_grad([](const TensorList& in) { return replication_pad1d(in[0], {2, 3}); }, {test::rand_leaf({2, 2, 5})});
  check_grad([](const TensorList& in) { return constant_pad_nd(in[0], {1, 2, -1, 1, 1, 0}, 3.5); },
             {test::rand_leaf({2, 3, 4})});
  // Reflection folds both the edge-adjacent copies back: d/dx of sum(pad([a, b, c], (1, 1)))
  // = pad reads [b, a, b, c, b] so b collects 3, a and c 1 each.
  Tensor r = from_values({1, 2, 3}, {1, 3}).requires_grad_(true);
  reflection_pad1d(r, {1, 1}).sum().backward();
  check_close(r.grad(), {1, 3, 1});
  CHECK(reflection_pad1d(r, {1, 1}).grad_fn()->name() == "ReflectionPad1DBackward0");
  CHECK(pad(r.unsqueeze(0), {1, 1, 1, 1}, "replicate").grad_fn()->name() == "ReplicationPad2DBackward0");
  CHECK(constant_pad_nd(r, {1, 1}).grad_fn()->name() == "ConstantPadNdBackward0");
  check_gradgrad([](const TensorList& in) { return pad(in[0], {1, 2, 2, 1}, "reflect"); },
                 {test::rand_leaf({1, 2, 3, 4})});
  check_gradgrad([](const TensorList& in) { return constant_pad_nd(in[0], {1, -1}, 2); }, {test::rand_leaf({2, 3})});
}

TEST_CASE("pad: error texts") {
  Tensor x = zeros({1, 1, 3, 3});
  check_error([&] { reflection_pad2d(x, {3, 3, 1, 1}); },
              "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding "
              "(3, 3) at dimension 3 of input [1, 1, 3, 3]");
  check_error([&] { pad(x, {1, 1, 3, 3}, "reflect"); },
              "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding "
              "(3, 3) at dimension 2 of input [1, 1, 3, 3]");
  check_error([&] { pad(x, {1}); }, "Padding length must be divisible by 2");
  check_error([&] { pad(x, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}); }, "Padding length too large");
  check_error([&] { pad(x, {3, 3}, "reflect"); },
              "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  check_error([&] { pad(x, {1, 1}, "circular", 1.0); }, "Padding mode \"circular\" doesn't take in value argument");
  check_error([&] { pad(x, {1, 1}, "wrap"); }, "Unrecognised padding mode wrap");
  check_error([&] { pad(zeros({1, 3, 3}), {4, 4}, "circular"); },
              "Padding value causes wrapping around more than once.");
  check_error([&] { pad(zeros({3, 3}), {1, 1}, "circular"); }, "Invalid padding size, expected 0 but got 2");
  check_error([&] { constant_pad_nd(zeros({3}), {1, 1, 1}); }, "Length of pad must be even but instead it equals 3");
  check_error([&] { constant_pad_nd(zeros({3}), {1, 1, 1, 1}); },
              "Length of pad should be no more than twice the number of dimensions of the input.");
  check_error([&] { constant_pad_nd(zeros({3}), {-2, -2}); },
              "The input size 3, plus negative padding -2 and -2 resulted in a negative output size");
  check_error([&] { reflection_pad2d(zeros({3, 0, 3}), {1, 1, 1, 1}); },
              "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
              "input, but got: [3, 0, 3]");
  check_error([&] { replication_pad1d(zeros({3}), {1, 1}); }, "Expected 2D or 3D (batch mode) tensor");
  check_error([&] { replication_pad1d(zeros({1, 3}), {-2, -2}); }, "input (W: 3) is too small. Calculated output W: -1");
  check_error([&] { reflection_pad2d(zeros({1, 3, 3}), {1, 1}); }, "padding size is expected to be 4, but got: 2");
}
