// nn::init: the gain table (PyTorch's values), fan computation, and each initialiser's
// support and moments on large tensors; orthogonal_ gives Q^T Q = I; trunc_normal_ bounds.
#include <cmath>

#include "ember/nn/init.h"
#include "op_check.h"

using namespace ember;
namespace init = ember::nn::init;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::values;

namespace {
std::pair<double, double> moments(const Tensor& t) {
  auto v = values(t);
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, var / static_cast<double>(v.size())};
}
}  // namespace

TEST_CASE("test_init: calculate_gain table") {
  // torch.nn.init.calculate_gain values.
  CHECK(init::calculate_gain(kLinear) == 1);
  CHECK(init::calculate_gain(kConv2D) == 1);
  CHECK(init::calculate_gain(kConvTranspose3D) == 1);
  CHECK(init::calculate_gain(kSigmoid) == 1);
  CHECK(init::calculate_gain(kTanh) == doctest::Approx(5.0 / 3));
  CHECK(init::calculate_gain(kReLU) == doctest::Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain(kLeakyReLU) == doctest::Approx(std::sqrt(2 / (1 + 0.01 * 0.01))));
  CHECK(init::calculate_gain(kLeakyReLU, std::sqrt(5.0)) == doctest::Approx(std::sqrt(1.0 / 3)));
  CHECK(init::calculate_gain(kSELU) == 0.75);
}

TEST_CASE("test_init: fan in and fan out") {
  auto [in2, out2] = init::calculate_fan_in_and_fan_out(empty({4, 3}));
  CHECK(in2 == 3);
  CHECK(out2 == 4);
  // Conv weight [out, in, kh, kw]: receptive field 5 * 7.
  auto [in4, out4] = init::_calculate_fan_in_and_fan_out(empty({8, 2, 5, 7}));
  CHECK(in4 == 2 * 35);
  CHECK(out4 == 8 * 35);
  check_error([] { init::calculate_fan_in_and_fan_out(empty({3})); },
              "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  check_error([] { init::xavier_uniform_(empty({3})); }, "fewer than 2 dimensions");
}

TEST_CASE("test_init: simple fills") {
  Tensor t = empty({2, 3});
  init::constant_(t, 2.5);
  check_close(t, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  init::zeros_(t);
  check_close(t, {0, 0, 0, 0, 0, 0});
  init::ones_(t);
  check_close(t, {1, 1, 1, 1, 1, 1});
  init::eye_(t);
  check_close(t, {1, 0, 0, 0, 1, 0});
  check_error([] { init::eye_(empty({2, 2, 2})); }, "Only tensors with 2 dimensions are supported");
  // In place on a parameter, no autograd history recorded.
  Tensor p = empty({3, 3}).requires_grad_(true);
  Tensor r = init::uniform_(p, -1, 1);
  CHECK(r.is_same(p));
  CHECK(p.is_leaf());
  CHECK(p.requires_grad());
  // dirac_: an identity convolution kernel.
  Tensor k = empty({2, 3, 3});
  init::dirac_(k);
  auto kv = values(k);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i)
      for (int x = 0; x < 3; ++x) CHECK(kv[(o * 3 + i) * 3 + x] == (o == i && x == 1 ? 1 : 0));
  Tensor g = empty({4, 2, 3, 3});
  init::dirac_(g, 2);
  CHECK(g.sum().item<double>() == 4);  // two per group
  check_error([] { init::dirac_(empty({2, 2})); }, "Only tensors with 3, 4, or 5 dimensions are supported");
  check_error([] { init::dirac_(empty({3, 2, 3}), 2); }, "dim 0 must be divisible by groups");
}

TEST_CASE("test_init: random initialisers have PyTorch's support and moments") {
  manual_seed(7);
  Tensor t = empty({200, 300});  // fan_in 300, fan_out 200
  init::uniform_(t, -3, 5);
  CHECK(t.min().item<double>() >= -3);
  CHECK(t.max().item<double>() < 5);
  CHECK(moments(t).first == doctest::Approx(1).epsilon(0.02));
  init::normal_(t, 2, 0.5);
  CHECK(moments(t).first == doctest::Approx(2).epsilon(0.01));
  CHECK(moments(t).second == doctest::Approx(0.25).epsilon(0.02));
  // xavier_uniform: a = gain * sqrt(6 / (fan_in + fan_out)).
  double a = 2 * std::sqrt(6.0 / 500);
  init::xavier_uniform_(t, 2);
  CHECK(t.abs().max().item<double>() <= a);
  CHECK(moments(t).second == doctest::Approx(a * a / 3).epsilon(0.02));
  // xavier_normal: std = gain * sqrt(2 / (fan_in + fan_out)).
  init::xavier_normal_(t);
  CHECK(moments(t).second == doctest::Approx(2.0 / 500).epsilon(0.02));
  // kaiming_uniform (relu, fan_in): bound = sqrt(2) * sqrt(3 / 300).
  double bound = std::sqrt(2.0) * std::sqrt(3.0 / 300);
  init::kaiming_uniform_(t, 0, kFanIn, kReLU);
  CHECK(t.abs().max().item<double>() <= bound);
  CHECK(moments(t).second == doctest::Approx(2.0 / 300).epsilon(0.02));
  // fan_out mode uses size(0).
  init::kaiming_normal_(t, 0, kFanOut, kReLU);
  CHECK(moments(t).second == doctest::Approx(2.0 / 200).epsilon(0.02));
  // Defaults: a = 0, fan_in, leaky_relu -> gain sqrt(2 / (1 + 0)) = sqrt(2).
  init::kaiming_normal_(t);
  CHECK(moments(t).second == doctest::Approx(2.0 / 300).epsilon(0.02));
  // Zero-element tensors are left alone.
  Tensor none = empty({0, 3});
  CHECK(init::kaiming_uniform_(none).numel() == 0);
  // Other dtypes.
  Tensor d = empty({50, 40}, kDouble);
  init::kaiming_uniform_(d, std::sqrt(5.0));
  CHECK(d.abs().max().item<double>() <= 1 / std::sqrt(40.0));
}

TEST_CASE("test_init: orthogonal_ gives orthonormal rows or columns") {
  manual_seed(8);
  for (auto dims : std::vector<std::vector<int64_t>>{{6, 4}, {4, 6}, {5, 5}, {3, 2, 2}}) {
    Tensor t = empty(dims, kDouble);
    init::orthogonal_(t, 1.0);
    Tensor m = t.view({dims[0], -1});
    // Tall: Q^T Q = I (orthonormal columns); wide: Q Q^T = I (orthonormal rows).
    Tensor gram = m.size(0) >= m.size(1) ? m.t().matmul(m) : m.matmul(m.t());
    check_close(gram, eye(gram.size(0), kDouble), 1e-10);
  }
  Tensor f = empty({8, 8});
  init::orthogonal_(f, 2.0);
  check_close(f.t().matmul(f), eye(8) * 4, 1e-4);
  // Different draws differ.
  Tensor a = empty({4, 4}), b = empty({4, 4});
  init::orthogonal_(a);
  init::orthogonal_(b);
  CHECK((a - b).abs().max().item<double>() > 1e-3);
  check_error([] { init::orthogonal_(empty({3})); }, "Only tensors with 2 or more dimensions are supported");
}

TEST_CASE("test_init: trunc_normal_ stays in [a, b] with the truncated moments") {
  manual_seed(9);
  Tensor t = empty({100000});
  init::trunc_normal_(t, 0, 1, -2, 2);
  CHECK(t.min().item<double>() >= -2);
  CHECK(t.max().item<double>() <= 2);
  auto [mean, var] = moments(t);
  CHECK(std::fabs(mean) < 0.01);
  // Variance of N(0,1) truncated to [-2, 2]: 1 - 2 * 2 * phi(2) / (Phi(2) - Phi(-2)) = 0.7737.
  CHECK(var == doctest::Approx(0.7737).epsilon(0.02));
  // Shifted, narrow window: all values inside [0.5, 1].
  init::trunc_normal_(t, 1, 0.02, 0.5, 1);
  CHECK(t.min().item<double>() >= 0.5);
  CHECK(t.max().item<double>() <= 1);
  CHECK(moments(t).first == doctest::Approx(1 - 0.02 * std::sqrt(2 / M_PI)).epsilon(0.001));
}
