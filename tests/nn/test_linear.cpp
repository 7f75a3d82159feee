// Linear-family layers and activation modules: forward values against matmul / plain loops /
// std:: formulas, PyTorch's default-init bounds and moments, float64 gradcheck of F::linear
// and F::bilinear, LazyLinear materialisation, error texts.
#include <cmath>

#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/linear.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "op_check.h"

using namespace ember;
namespace F = ember::nn::functional;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {
// Mean and (population) variance of all elements.
std::pair<double, double> moments(const Tensor& t) {
  auto v = values(t);
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, var / static_cast<double>(v.size())};
}
}  // namespace

TEST_CASE("test_linear: Linear forward is x W^T + b for 1-d, 2-d and 3-d inputs") {
  manual_seed(1);
  nn::Linear fc(3, 2);
  CHECK(shape(fc->weight) == std::vector<int64_t>{2, 3});
  CHECK(shape(fc->bias) == std::vector<int64_t>{2});
  // Hand-set weights: y = [x0 + 2 x1 + 3 x2 + 1, -x0 + x2 - 1].
  {
    NoGradGuard no_grad;
    fc->weight.copy_(from_values({1, 2, 3, -1, 0, 1}, {2, 3}, kFloat));
    fc->bias.copy_(from_values({1, -1}, {2}, kFloat));
  }
  check_close(fc(from_values({1, 1, 1}, {3}, kFloat)), {7, -1});
  check_close(fc(from_values({1, 0, 0, 0, 1, 2}, {2, 3}, kFloat)), {2, -2, 9, 1});
  Tensor x3 = rand({2, 4, 3});
  check_close(fc(x3), x3.matmul(fc->weight.t()) + fc->bias);
  nn::Linear no_bias(nn::LinearOptions(3, 2).bias(false));
  check_close(no_bias(x3), x3.matmul(no_bias->weight.t()));
  check_error([&] { fc(rand({2, 4})); }, "cannot be multiplied");
  // Empty batch.
  CHECK(shape(fc(zeros({0, 3}))) == std::vector<int64_t>{0, 2});
}

TEST_CASE("test_linear: default init draws from U(+-1/sqrt(in_features))") {
  manual_seed(2);
  nn::Linear fc(100, 200);
  const double bound = 0.1;  // kaiming_uniform(a=sqrt(5)): sqrt(6/(1+5)) / sqrt(100) = 0.1
  CHECK(fc->weight.abs().max().item<double>() <= bound);
  CHECK(fc->bias.abs().max().item<double>() <= bound);
  auto [mean, var] = moments(fc->weight);
  CHECK(std::fabs(mean) < 0.005);
  CHECK(var == doctest::Approx(bound * bound / 3).epsilon(0.05));  // U(-b, b) has variance b^2/3
  CHECK(fc->weight.abs().max().item<double>() > 0.095);  // the whole range is used
  // reset_parameters re-draws.
  Tensor before = fc->weight.clone();
  fc->reset_parameters();
  CHECK((fc->weight - before).abs().max().item<double>() > 0);
  // Zero fan-in: nothing to draw and no division by zero.
  nn::Linear degenerate(0, 3);
  CHECK(shape(degenerate(zeros({2, 0}))) == std::vector<int64_t>{2, 3});
}

TEST_CASE("test_linear: F::linear gradcheck (also non-contiguous) and gradgradcheck") {
  manual_seed(3);
  auto fn = [](const TensorList& t) { return F::linear(t[0], t[1], t[2]); };
  check_grad(fn, {rand_leaf({4, 3}), rand_leaf({2, 3}), rand_leaf({2})});
  check_grad(fn, {rand_leaf({2, 4, 3}), rand_leaf({2, 3}), rand_leaf({2})});
  Tensor wt = rand_leaf({3, 2});  // transposed view: a non-contiguous weight
  check_grad([](const TensorList& t) { return F::linear(t[0].t(), t[1].t(), {}); }, {rand_leaf({3, 4}), wt});
  check_gradgrad(fn, {rand_leaf({3, 3}), rand_leaf({2, 3}), rand_leaf({2})});
}

TEST_CASE("test_linear: F::bilinear against a plain loop, gradcheck and errors") {
  manual_seed(4);
  Tensor x1 = rand({5, 2}, kDouble), x2 = rand({5, 3}, kDouble), w = rand({4, 2, 3}, kDouble), b = rand({4}, kDouble);
  Tensor y = F::bilinear(x1, x2, w, b);
  CHECK(shape(y) == std::vector<int64_t>{5, 4});
  auto X1 = values(x1), X2 = values(x2), W = values(w), B = values(b), Y = values(y);
  for (int n = 0; n < 5; ++n)
    for (int o = 0; o < 4; ++o) {
      double ref = B[o];
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) ref += X1[n * 2 + i] * W[(o * 2 + i) * 3 + j] * X2[n * 3 + j];
      CHECK(Y[n * 4 + o] == doctest::Approx(ref).epsilon(1e-12));
    }
  // Batched (extra leading dims) equals the flattened result.
  check_close(F::bilinear(x1.view({5, 1, 2}), x2.view({5, 1, 3}), w, b).view({5, 4}), y);
  auto fn = [](const TensorList& t) { return F::bilinear(t[0], t[1], t[2], t[3]); };
  check_grad(fn, {rand_leaf({3, 2}), rand_leaf({3, 3}), rand_leaf({4, 2, 3}), rand_leaf({4})});
  check_grad([](const TensorList& t) { return F::bilinear(t[0].t(), t[1], t[2], {}); },
             {rand_leaf({2, 3}), rand_leaf({3, 3}), rand_leaf({4, 2, 3})});
  check_gradgrad(fn, {rand_leaf({2, 2}), rand_leaf({2, 3}), rand_leaf({2, 2, 3}), rand_leaf({2})});
  check_error([&] { F::bilinear(x1, x2.view({5, 3, 1}), w); }, "bilinear(): input dimensions do not match: got 2 and 3");
  check_error([&] { F::bilinear(x1, x2.narrow(0, 0, 4), w); },
              "bilinear(): input batch dimensions do not match: got 5 and 4");
  check_error([&] { F::bilinear(x2, x2, w); }, "bilinear(): input1 size does not match weight size: got 3 but expected 2");
  check_error([&] { F::bilinear(x1, x1, w); }, "bilinear(): input2 size does not match weight size: got 2 but expected 3");
  check_error([&] { F::bilinear(x1, x2, w, rand({3}, kDouble)); },
              "bilinear(): bias size does not match weight size: got 3 but expected 4");
}

TEST_CASE("test_linear: Bilinear module shape, init bounds and forward") {
  manual_seed(5);
  nn::Bilinear bl(16, 3, 400);
  CHECK(shape(bl->weight) == std::vector<int64_t>{400, 16, 3});
  CHECK(bl->weight.abs().max().item<double>() <= 0.25);  // 1/sqrt(in1_features) = 1/4
  CHECK(bl->bias.abs().max().item<double>() <= 0.25);
  auto [mean, var] = moments(bl->weight);
  CHECK(std::fabs(mean) < 0.01);
  CHECK(var == doctest::Approx(0.0625 / 3).epsilon(0.05));
  Tensor a = rand({2, 16}), c = rand({2, 3});
  check_close(bl(a, c), F::bilinear(a, c, bl->weight, bl->bias));
}

TEST_CASE("test_linear: Identity, Flatten and Unflatten") {
  Tensor x = rand({2, 3, 4, 5});
  CHECK(nn::Identity()(x).is_same(x));
  CHECK(shape(nn::Flatten()(x)) == std::vector<int64_t>{2, 60});
  CHECK(shape(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(1))(x)) == std::vector<int64_t>{6, 4, 5});
  CHECK(shape(nn::Flatten(nn::FlattenOptions().start_dim(2))(x)) == std::vector<int64_t>{2, 3, 20});
  Tensor flat = nn::Flatten()(x);
  Tensor back = nn::Unflatten(1, std::vector<int64_t>{3, 4, 5})(flat);
  check_close(back, x);
  CHECK(shape(nn::Unflatten(1, std::vector<int64_t>{-1, 5})(flat)) == std::vector<int64_t>{2, 12, 5});
  // An MLP on images: Flatten then Linear.
  nn::Sequential mlp(nn::Flatten(), nn::Linear(60, 10));
  CHECK(shape(mlp(x)) == std::vector<int64_t>{2, 10});
}

TEST_CASE("test_linear: LazyLinear takes in_features from its first input") {
  manual_seed(6);
  nn::LazyLinear lazy(4);
  CHECK(lazy->has_uninitialized_params());
  CHECK(lazy->parameters().empty());
  CHECK(lazy->state_dict().is_empty());
  Tensor x = rand({3, 25});
  Tensor y = lazy(x);
  CHECK_FALSE(lazy->has_uninitialized_params());
  CHECK(lazy->in_features == 25);
  CHECK(lazy->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(lazy->named_parameters()["weight"].is_same(lazy->weight));
  CHECK(shape(lazy->weight) == std::vector<int64_t>{4, 25});
  CHECK(lazy->weight.requires_grad());
  CHECK(lazy->weight.abs().max().item<double>() <= 0.2);  // 1/sqrt(25)
  CHECK(lazy->bias.abs().max().item<double>() <= 0.2);
  check_close(y, x.matmul(lazy->weight.t()) + lazy->bias);
  // Trains: gradients reach the materialised parameters.
  lazy(x).sum().backward();
  CHECK(lazy->weight.grad().defined());
  // Prints as the Linear it became (PyTorch swaps the class).
  std::ostringstream os;
  os << *lazy;
  CHECK(os.str() == "Linear(in_features=25, out_features=4, bias=True)");
  // Clone of the materialised module.
  auto copy = std::dynamic_pointer_cast<nn::LazyLinearImpl>(lazy->clone());
  check_close(copy->forward(x), y);
  CHECK_FALSE(copy->weight.is_alias_of(lazy->weight));
  // Inside a container the keys stay stable.
  nn::Sequential seq(nn::LazyLinear(nn::LazyLinearOptions(2).bias(false)));
  seq(rand({1, 7}));
  CHECK(seq->named_parameters().keys() == std::vector<std::string>{"0.weight"});
}

TEST_CASE("test_linear: activation modules match their formulas") {
  Tensor x = from_values({-2, -0.5, 0, 0.5, 2}, {5});
  std::vector<double> xs = {-2, -0.5, 0, 0.5, 2};
  auto map = [&](auto f) {
    std::vector<double> out;
    for (double v : xs) out.push_back(f(v));
    return out;
  };
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  check_close(nn::ReLU()(x), map([](double v) { return v > 0 ? v : 0; }));
  check_close(nn::LeakyReLU()(x), map([](double v) { return v > 0 ? v : 0.01 * v; }));
  check_close(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x), map([](double v) { return v > 0 ? v : 0.2 * v; }));
  check_close(nn::ELU(nn::ELUOptions().alpha(0.5))(x), map([](double v) { return v > 0 ? v : 0.5 * std::expm1(v); }));
  check_close(nn::GELU()(x), map([](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }));
  check_close(nn::GELU(nn::GELUOptions().approximate("tanh"))(x), map([](double v) {
                return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
              }));
  check_close(nn::SiLU()(x), map([&](double v) { return v * sigmoid(v); }));
  check_close(nn::Sigmoid()(x), map(sigmoid));
  check_close(nn::Tanh()(x), map([](double v) { return std::tanh(v); }));
  // inplace overwrites the input.
  Tensor y = x.clone();
  Tensor r = nn::ReLU(nn::ReLUOptions(true))(y);
  check_close(y, {0, 0, 0, 0.5, 2});
  CHECK(r.is_alias_of(y));
  Tensor z = x.clone();
  F::leaky_relu(z, F::LeakyReLUFuncOptions().negative_slope(0.5).inplace(true));
  check_close(z, {-1, -0.25, 0, 0.5, 2});
  Tensor e = x.clone();
  F::elu(e, F::ELUFuncOptions().inplace(true));
  check_close(e, map([](double v) { return v > 0 ? v : std::expm1(v); }));
  // Gradients flow through the modules.
  Tensor leaf = rand_leaf({3, 4});
  check_grad([](const TensorList& t) { return nn::GELU()(t[0]) + nn::SiLU()(t[0]) + nn::ELU()(t[0]); }, {leaf});
}
