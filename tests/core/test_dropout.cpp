// dropout, feature_dropout, alpha_dropout (core/ops/dropout.cpp): drop rate and scaling
// statistics, identity in evaluation, repeatability under manual_seed, backward with the
// forward's mask, whole-channel masks, alpha dropout's values (PyTorch's constants), errors.
#include <cmath>

#include "ember/core/ops/dropout.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;
using ember::test::values;

TEST_CASE("dropout drops about p of the elements and scales the rest by 1/(1-p)") {
  manual_seed(0);
  for (double p : {0.2, 0.5, 0.9}) {
    Tensor y = dropout(ones({40000}), p, true);
    std::vector<double> v = values(y);
    int64_t zeros_seen = 0;
    for (double e : v) {
      if (e == 0)
        ++zeros_seen;
      else
        CHECK(e == doctest::Approx(1 / (1 - p)));
    }
    double rate = static_cast<double>(zeros_seen) / v.size();
    // Standard deviation of the rate is sqrt(p (1 - p) / n) < 0.0025; allow 4 of them.
    CHECK(std::fabs(rate - p) < 0.01);
  }
}

TEST_CASE("dropout is the identity in evaluation or with p = 0, and zero with p = 1") {
  Tensor x = rand_leaf({3, 4});
  CHECK(dropout(x, 0.5, false).is_same(x));
  CHECK(dropout(x, 0.0, true).is_same(x));
  Tensor z = dropout(x, 1.0, true);
  check_close(z, std::vector<double>(12, 0.0));
  CHECK(z.requires_grad());  // still in the graph
  z.sum().backward();
  check_close(x.grad(), std::vector<double>(12, 0.0));
  CHECK(dropout(empty({0, 3}), 0.5, true).numel() == 0);
}

TEST_CASE("dropout masks repeat under manual_seed and backward uses the forward's mask") {
  manual_seed(42);
  Tensor a = dropout(ones({1000}), 0.5, true);
  manual_seed(42);
  Tensor b = dropout(ones({1000}), 0.5, true);
  CHECK(equal(a, b));
  Tensor c = dropout(ones({1000}), 0.5, true);
  CHECK_FALSE(equal(a, c));

  Tensor x = (rand({500}, kDouble) + 1).requires_grad_(true);  // no zeros in x
  Tensor y = dropout(x, 0.3, true);
  y.backward(ones_like(y));
  std::vector<double> yv = values(y), gv = values(x.grad()), xv = values(x);
  for (size_t i = 0; i < yv.size(); ++i) {
    // Kept: y = x / 0.7 and dy/dx = 1 / 0.7; dropped: both 0.
    CHECK(gv[i] == doctest::Approx(yv[i] == 0 ? 0.0 : 1 / 0.7));
    if (yv[i] != 0) CHECK(yv[i] == doctest::Approx(xv[i] / 0.7));
  }
  // With the seed reset inside, every evaluation draws the same mask: gradcheck applies.
  check_grad(
      [](const TensorList& t) {
        manual_seed(3);
        return dropout(t[0], 0.4, true);
      },
      {rand_leaf({4, 5})});
  check_gradgrad(
      [](const TensorList& t) {
        manual_seed(3);
        return dropout(t[0] * t[0], 0.4, true);
      },
      {rand_leaf({6})});
}

TEST_CASE("dropout_ works in place") {
  manual_seed(5);
  Tensor x = ones({100});
  Tensor& r = dropout_(x, 0.5, true);
  CHECK(&r == &x);
  for (double e : values(x)) CHECK((e == 0 || e == 2));
  Tensor leaf = rand_leaf({10});
  Tensor h = leaf * 1;
  dropout_(h, 0.5, true);
  h.sum().backward();
  for (size_t i = 0; i < 10; ++i) CHECK(values(leaf.grad())[i] == values(h)[i] / values(leaf)[i]);
}

TEST_CASE("feature_dropout zeroes whole channels") {
  manual_seed(7);
  Tensor y = feature_dropout(ones({8, 16, 3, 3}), 0.5, true);
  int64_t dropped = 0;
  for (int64_t n = 0; n < 8; ++n)
    for (int64_t c = 0; c < 16; ++c) {
      std::vector<double> v = values(y[n][c]);
      bool zero = v[0] == 0;
      dropped += zero;
      for (double e : v) CHECK(e == (zero ? 0.0 : 2.0));
    }
  CHECK(dropped > 30);  // 128 channels at p = 0.5: 64 expected
  CHECK(dropped < 98);
  // 3-d input is (N, C, L) for ATen's feature_dropout: one draw per (n, c).
  Tensor z = feature_dropout(ones({2, 3, 4}), 0.5, true);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c) {
      std::vector<double> v = values(z[n][c]);
      for (double e : v) CHECK(e == v[0]);
    }
  check_error([] { feature_dropout(ones({4}), 0.5, true); },
              "Feature dropout requires at least 2 dimensions");
}

TEST_CASE("alpha_dropout uses PyTorch's constants and keeps mean and variance") {
  manual_seed(9);
  // p = 0.5: a = 1/sqrt((alpha^2 p + 1)(1 - p)); kept 1 -> a + alpha a p = 1.6655988,
  // dropped -> alpha a (p - 1) = -0.7791939 (the values torch.alpha_dropout gives for ones).
  for (double e : values(alpha_dropout(ones({50}), 0.5, true)))
    CHECK((std::fabs(e - 1.6655988251839635) < 1e-6 || std::fabs(e + 0.7791939305180315) < 1e-6));
  Tensor y = alpha_dropout(randn({200000}, kDouble), 0.3, true);
  CHECK(std::fabs(y.mean().item<double>()) < 0.02);
  CHECK(std::fabs(y.var().item<double>() - 1) < 0.03);
  Tensor f = feature_alpha_dropout(ones({4, 6, 5}), 0.5, true);
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t c = 0; c < 6; ++c) {
      std::vector<double> v = values(f[n][c]);
      for (double e : v) CHECK(e == v[0]);
    }
  Tensor x = ones({3});
  CHECK(alpha_dropout(x, 0.5, false).is_same(x));
}

TEST_CASE("dropout probability outside [0, 1] is an error") {
  check_error([] { dropout(ones({3}), 1.5, true); },
              "dropout probability has to be between 0 and 1, but got 1.5");
  check_error(
      [] {
        feature_dropout(ones({3, 3}), -0.1, false);
      },
      "dropout probability has to be between 0 and 1");
  Tensor x = ones({3});
  check_error([&] { alpha_dropout_(x, 2, true); },
              "dropout probability has to be between 0 and 1, but got 2");
}
