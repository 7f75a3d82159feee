// Activations and clamp (core/ops/activation.cpp): values against formulas computed here with
// std:: math and a few PyTorch 1.13 numbers, gradients at the kinks (PyTorch's conventions),
// float64 gradcheck (also non-contiguous and broadcast) and gradgradcheck, dtype rules,
// in-place forms, error texts, empty and 0-dim tensors.
#include <cmath>
#include <limits>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::shape;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

const std::vector<double> kInputs = {-30.0, -3.0, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 25.0};

Tensor vec(const std::vector<double>& v, ScalarType t = kDouble) {
  return from_values(v, {static_cast<int64_t>(v.size())}, t);
}

template <class F>
std::vector<double> map(const std::vector<double>& xs, F f) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}

double gelu_ref(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }
double gelu_tanh_ref(double v) {
  return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
}
double softplus_ref(double v, double beta, double threshold) {
  return v * beta > threshold ? v : std::log(1 + std::exp(v * beta)) / beta;
}
double elu_ref(double v, double alpha, double scale, double input_scale) {
  return v > 0 ? scale * v : scale * alpha * (std::exp(v * input_scale) - 1);
}

/// Values away from every kink used below (0, +-0.5, +-1, 6), as a 2x3 leaf and as a
/// non-contiguous (transposed) 2x3 leaf.
const std::vector<double> kSmooth = {-1.7, -0.6, -0.2, 0.3, 0.9, 2.2};
Tensor smooth_leaf() { return from_values(kSmooth, {2, 3}).requires_grad_(true); }
Tensor smooth_noncontiguous() {
  Tensor t = from_values(kSmooth, {3, 2}).t().detach().requires_grad_(true);
  REQUIRE(!t.is_contiguous());
  return t;
}

using Fn = Tensor (*)(const TensorList&);

/// gradcheck on contiguous, non-contiguous and 0-dim inputs.
void check_grads(Fn fn) {
  check_grad(fn, {smooth_leaf()});
  check_grad(fn, {smooth_noncontiguous()});
  check_grad(fn, {from_values({0.3}, {}).requires_grad_(true)});
}

}  // namespace

TEST_CASE("test_activation: relu") {
  Tensor x = vec({-2.0, -0.0, 0.0, 0.5, 3.0, kNan, kInf, -kInf});
  check_close(x.relu(), {0, 0, 0, 0.5, 3.0, kNan, kInf, 0});
  check_close(relu(x.to(kFloat)), {0, 0, 0, 0.5, 3.0, kNan, kInf, 0});
  check_close(relu(x.to(kBFloat16)), {0, 0, 0, 0.5, 3.0, kNan, kInf, 0});
  Tensor i = tensor({-2, 0, 3}, kLong);
  CHECK(i.relu().dtype() == kLong);
  check_close(i.relu(), {0, 0, 3});
  check_close(tensor({-1, 2}, kInt8).relu(), {0, 2});
  check_close(tensor({200, 0}, kUInt8).relu(), {200, 0});
  check_error([] { tensor({true}).relu(); }, "Boolean inputs not supported for relu");
  check_error([] { Tensor b = tensor({true}); b.relu_(); }, "Boolean inputs not supported for relu");

  // Gradient 1 where the result is > 0, 0 at x = 0; a nan result passes the gradient on
  // (PyTorch's threshold_backward): torch.relu(tensor([nan, .5, -1.])) grads [1, 1, 0].
  Tensor g = vec({-1.0, 0.0, 2.0, kNan}).requires_grad_(true);
  g.relu().sum().backward();
  check_close(g.grad(), {0, 0, 1, 1});
  CHECK(g.relu().grad_fn()->name() == "ReluBackward0");
  check_grads([](const TensorList& in) { return in[0].relu(); });
  check_gradgrad([](const TensorList& in) { return in[0].relu(); }, {smooth_leaf()});

  // In place: values, version, and autograd through a non-leaf (relu saves its output).
  Tensor y = x.clone();
  uint32_t v0 = y._version();
  Tensor& r = y.relu_();
  CHECK(&r == &y);
  CHECK(y._version() > v0);
  check_close(y, {0, 0, 0, 0.5, 3.0, kNan, kInf, 0});
  Tensor a = vec({-1.0, 2.0, 3.0}).requires_grad_(true);
  Tensor b = a * 2.0;
  b.relu_();
  (b * b).sum().backward();  // d/da (2a)^2 = 8a where a > 0
  check_close(a.grad(), {0, 16, 24});
  Tensor j = i.clone();
  j.relu_();
  check_close(j, {0, 0, 3});
}

TEST_CASE("test_activation: leaky_relu") {
  Tensor x = vec(kInputs);
  check_close(leaky_relu(x), map(kInputs, [](double v) { return v > 0 ? v : 0.01 * v; }), 1e-15, 1e-14);
  check_close(leaky_relu(x, 0.2), map(kInputs, [](double v) { return v > 0 ? v : 0.2 * v; }), 1e-15, 1e-14);
  check_close(leaky_relu(vec({-2.0, kNan}, kFloat), 0.1), {-0.2, kNan});
  CHECK(leaky_relu(x.to(kHalf)).dtype() == kHalf);
  check_error([] { leaky_relu(tensor({1, 2}, kLong)); }, "\"leaky_relu\" not implemented for 'Long'");
  check_error([] { Tensor i = tensor({1, 2}, kLong); leaky_relu_(i); }, "\"leaky_relu\" not implemented for 'Long'");

  // d/dx = 1 for x > 0, slope otherwise (slope at 0): torch gives [0.2, 0.2, 1] at [-1, 0, 2].
  Tensor g = vec({-1.0, 0.0, 2.0}).requires_grad_(true);
  leaky_relu(g, 0.2).sum().backward();
  check_close(g.grad(), {0.2, 0.2, 1.0});
  CHECK(leaky_relu(g).grad_fn()->name() == "LeakyReluBackward0");
  check_grads([](const TensorList& in) { return leaky_relu(in[0], 0.3); });
  check_grads([](const TensorList& in) { return leaky_relu(in[0], -0.5); });
  check_gradgrad([](const TensorList& in) { return leaky_relu(in[0], 0.3); }, {smooth_leaf()});

  Tensor y = vec({-2.0, 3.0});
  uint32_t v0 = y._version();
  Tensor& r = leaky_relu_(y, 0.5);
  CHECK(&r == &y);
  CHECK(y._version() > v0);
  check_close(y, {-1.0, 3.0});
  // Through a non-leaf, also with a negative slope (the input is kept for backward).
  Tensor a = vec({-1.0, 2.0}).requires_grad_(true);
  Tensor b = a * 1.0;
  leaky_relu_(b, -0.5);
  b.sum().backward();
  check_close(a.grad(), {-0.5, 1.0});
}

TEST_CASE("test_activation: elu and selu") {
  Tensor x = vec(kInputs);
  check_close(elu(x), map(kInputs, [](double v) { return elu_ref(v, 1, 1, 1); }), 1e-15, 1e-12);
  check_close(elu(x, 0.5, 2.0, 3.0), map(kInputs, [](double v) { return elu_ref(v, 0.5, 2, 3); }), 1e-15, 1e-12);
  check_close(selu(x), map(kInputs, [](double v) { return elu_ref(v, kSeluAlpha, kSeluScale, 1); }), 1e-15, 1e-12);
  // torch: F.selu([-1, 0, 2]) = [-1.1113307, 0, 2.1014020]; aten.elu([-1, 2], 1, 2, 3) = [-1.9004259, 4]
  check_close(selu(vec({-1.0, 0.0, 2.0}, kFloat)), {-1.1113307476043701, 0.0, 2.1014020442962646});
  check_close(elu(vec({-1.0, 2.0}, kFloat), 1.0, 2.0, 3.0), {-1.900425910949707, 4.0});
  check_close(elu(vec({kNan, kInf, -kInf})), {kNan, kInf, -1.0});
  check_error([] { elu(tensor({1}, kLong)); }, "\"elu\" not implemented for 'Long'");
  check_error([] { selu(tensor({true})); }, "\"elu\" not implemented for 'Bool'");

  // d/dx = scale for x > 0, input_scale alpha scale e^{input_scale x} for x <= 0 (so alpha at 0):
  // torch: F.elu([-1, 0, 2], alpha=2) grads [2/e, 2, 1].
  Tensor g = vec({-1.0, 0.0, 2.0}).requires_grad_(true);
  elu(g, 2.0).sum().backward();
  check_close(g.grad(), {2.0 / std::exp(1.0), 2.0, 1.0});
  CHECK(selu(g).grad_fn()->name() == "EluBackward0");
  check_grads([](const TensorList& in) { return elu(in[0]); });
  check_grads([](const TensorList& in) { return elu(in[0], 0.5, 2.0, 3.0); });
  check_grads([](const TensorList& in) { return selu(in[0]); });
  check_gradgrad([](const TensorList& in) { return elu(in[0], 0.5, 2.0, 3.0); }, {smooth_leaf()});
  check_gradgrad([](const TensorList& in) { return selu(in[0]); }, {smooth_leaf()});
  // Large inputs: the masked-out exponential must not turn the gradient into nan.
  Tensor big = vec({800.0, -800.0}).requires_grad_(true);
  auto gs = autograd::grad({elu(big).sum()}, {big}, {}, true, true);
  check_close(gs[0], {1.0, 0.0});
  check_close(autograd::grad({gs[0].sum()}, {big})[0], {0.0, 0.0});
}

TEST_CASE("test_activation: gelu") {
  Tensor x = vec(kInputs);
  check_close(gelu(x), map(kInputs, gelu_ref), 1e-15, 1e-12);
  check_close(gelu(x, "tanh"), map(kInputs, gelu_tanh_ref), 1e-15, 1e-12);
  // torch: F.gelu([-3, -1, 0, 0.5, 2]) and with approximate='tanh' (float32).
  Tensor f = vec({-3.0, -1.0, 0.0, 0.5, 2.0}, kFloat);
  check_close(gelu(f), {-0.004049867391586304, -0.1586552858352661, 0.0, 0.3457311987876892, 1.9544999599456787});
  check_close(gelu(f, "tanh"),
              {-0.0036374330520629883, -0.15880799293518066, 0.0, 0.3457140028476715, 1.9545977115631104});
  // -inf * Phi(-inf) = -inf * 0 = nan, as in PyTorch.
  check_close(gelu(vec({kNan, kInf, -kInf})), {kNan, kInf, kNan});
  check_close(gelu(vec({kNan, kInf, -kInf}), "tanh"), {kNan, kInf, kNan});
  CHECK(gelu(f.to(kBFloat16)).dtype() == kBFloat16);
  check_error([&] { gelu(f, "exact"); }, "approximate argument must be either none or tanh.");
  check_error([] { gelu(tensor({1}, kLong)); }, "\"gelu\" not implemented for 'Long'");

  // torch gradients at [-3, -1, 0, 0.5, 2].
  Tensor g = vec({-3.0, -1.0, 0.0, 0.5, 2.0}).requires_grad_(true);
  gelu(g).sum().backward();
  check_close(g.grad(), {-0.011945605278015137, -0.08331543207168579, 0.5, 0.867495059967041, 1.085231900215149});
  g.mutable_grad().reset();
  gelu(g, "tanh").sum().backward();
  check_close(g.grad(), {-0.011584296822547913, -0.08296409249305725, 0.5, 0.8673698902130127, 1.0860992670059204});
  CHECK(gelu(g).grad_fn()->name() == "GeluBackward0");
  check_grads([](const TensorList& in) { return gelu(in[0]); });
  check_grads([](const TensorList& in) { return gelu(in[0], "tanh"); });
  check_gradgrad([](const TensorList& in) { return gelu(in[0]); }, {smooth_leaf()});
  check_gradgrad([](const TensorList& in) { return gelu(in[0], "tanh"); }, {smooth_leaf()});
}

TEST_CASE("test_activation: silu, mish, softplus") {
  Tensor x = vec(kInputs);
  check_close(silu(x), map(kInputs, [](double v) { return v / (1 + std::exp(-v)); }), 1e-15, 1e-12);
  check_close(mish(x), map(kInputs, [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }), 1e-15, 1e-12);
  check_close(softplus(x), map(kInputs, [](double v) { return softplus_ref(v, 1, 20); }), 1e-15, 1e-12);
  check_close(softplus(x, 2, 1), map(kInputs, [](double v) { return softplus_ref(v, 2, 1); }), 1e-15, 1e-12);
  // torch: F.mish([-3, -1, 0, 0.5, 2]); F.softplus([-30, 0, 10, 25]); F.softplus([-1, 1, 30], 2, 1).
  check_close(mish(vec({-3.0, -1.0, 0.0, 0.5, 2.0}, kFloat)),
              {-0.14564746618270874, -0.3034014403820038, 0.0, 0.37524524331092834, 1.9439589977264404});
  check_close(softplus(vec({-30.0, 0.0, 10.0, 25.0}, kFloat)), {9.3576e-14, 0.69314718, 10.0000454, 25.0}, 1e-6,
              1e-5);
  check_close(softplus(vec({-1.0, 1.0, 30.0}, kFloat), 2, 1), {0.06346400082111359, 1.0, 30.0});
  // -inf / (1 + e^inf) = nan, as in PyTorch; softplus(-inf) = 0.
  check_close(silu(vec({kNan, kInf, -kInf})), {kNan, kInf, kNan});
  check_close(mish(vec({kNan, kInf, -kInf})), {kNan, kInf, kNan});
  check_close(softplus(vec({kNan, kInf, -kInf})), {kNan, kInf, 0.0});
  check_close(mish(vec({800.0, -800.0})), {800.0, 0.0});  // e^800 overflows: tanh(inf) = 1
  check_error([] { silu(tensor({1}, kLong)); }, "\"silu\" not implemented for 'Long'");
  check_error([] { mish(tensor({1}, kInt32)); }, "\"mish\" not implemented for 'Int'");
  check_error([] { softplus(tensor({1}, kLong)); }, "\"softplus\" not implemented for 'Long'");

  // torch gradients at [-3, -1, 0, 0.5, 2].
  Tensor g = vec({-3.0, -1.0, 0.0, 0.5, 2.0}).requires_grad_(true);
  silu(g).sum().backward();
  check_close(g.grad(), {-0.08810410648584366, 0.07232948392629623, 0.5, 0.7399612069129944, 1.0907843112945557});
  g.mutable_grad().reset();
  mish(g).sum().backward();
  check_close(g.grad(), {-0.09339312463998795, 0.059216730296611786, 0.6, 0.8864244222640991, 1.0693179368972778});
  // softplus(beta=2, threshold=1): sigmoid(2x) below the threshold, 1 above (x > 0.5).
  Tensor h = vec({-1.0, 0.25, 0.5, 0.75}).requires_grad_(true);
  softplus(h, 2, 1).sum().backward();
  check_close(h.grad(), {0.11920291930437088, 0.622459352016449, 0.7310585975646973, 1.0});
  CHECK(softplus(h).grad_fn()->name() == "SoftplusBackward0");

  check_grads([](const TensorList& in) { return silu(in[0]); });
  check_grads([](const TensorList& in) { return mish(in[0]); });
  check_grads([](const TensorList& in) { return softplus(in[0]); });
  check_grads([](const TensorList& in) { return softplus(in[0], 2, 1); });  // kink at 0.5: both sides
  check_gradgrad([](const TensorList& in) { return silu(in[0]); }, {smooth_leaf()});
  check_gradgrad([](const TensorList& in) { return mish(in[0]); }, {smooth_leaf()});
  check_gradgrad([](const TensorList& in) { return softplus(in[0]); }, {smooth_leaf()});
  check_gradgrad([](const TensorList& in) { return softplus(in[0], 2, 1); }, {smooth_leaf()});
}

TEST_CASE("test_activation: hardtanh and relu6") {
  Tensor x = vec({-2.0, -1.0, 0.5, 1.0, 3.0, 7.0, kNan});
  check_close(hardtanh(x), {-1, -1, 0.5, 1, 1, 1, kNan});
  check_close(hardtanh(x, -0.5, 2.0), {-0.5, -0.5, 0.5, 1, 2, 2, kNan});
  check_close(relu6(x), {0, 0, 0.5, 1, 3, 6, kNan});
  // Integers keep their dtype; the bounds are cast to it (torch: hardtanh(long, -0.5, 0.5) = 0).
  Tensor i = tensor({-2, 0, 3, 7}, kLong);
  CHECK(hardtanh(i).dtype() == kLong);
  check_close(hardtanh(i), {-1, 0, 1, 1});
  check_close(hardtanh(i, -0.5, 0.5), {0, 0, 0, 0});
  check_close(relu6(i), {0, 0, 3, 6});
  check_error([] { hardtanh(tensor({true})); }, "Bool inputs not supported for hardtanh");
  check_error([] { relu6(tensor({true})); }, "Bool inputs not supported for hardtanh");

  // d/dx = 1 strictly inside (min, max), 0 at and beyond the bounds; nan passes it on:
  // torch: hardtanh([-1, 0, 1, 2]) grads [0, 1, 0, 0]; hardtanh([nan, .5]) grads [1, 1].
  Tensor g = vec({-1.0, 0.0, 1.0, 2.0, kNan}).requires_grad_(true);
  hardtanh(g).sum().backward();
  check_close(g.grad(), {0, 1, 0, 0, 1});
  CHECK(relu6(g).grad_fn()->name() == "HardtanhBackward0");
  check_grads([](const TensorList& in) { return hardtanh(in[0]); });
  check_grads([](const TensorList& in) { return hardtanh(in[0], -0.5, 2.0); });
  check_grads([](const TensorList& in) { return relu6(in[0] * 4.0); });
  check_gradgrad([](const TensorList& in) { return hardtanh(in[0]); }, {smooth_leaf()});
}

TEST_CASE("test_activation: clamp with scalar bounds") {
  Tensor x = vec({-2.0, -1.0, 0.0, 0.5, 1.0, 3.0, kNan, kInf, -kInf});
  check_close(x.clamp(-1.0, 1.0), {-1, -1, 0, 0.5, 1, 1, kNan, 1, -1});
  check_close(x.clamp(0.0), {0, 0, 0, 0.5, 1, 3, kNan, kInf, 0});
  check_close(x.clamp(std::nullopt, 0.5), {-2, -1, 0, 0.5, 0.5, 0.5, kNan, 0.5, -kInf});
  check_close(x.clamp_min(0.5), {0.5, 0.5, 0.5, 0.5, 1, 3, kNan, kInf, 0.5});
  check_close(x.clamp_max(-1), {-2, -1, -1, -1, -1, -1, kNan, -1, -kInf});
  check_close(ember::clip(x, -1.0, 1.0), {-1, -1, 0, 0.5, 1, 1, kNan, 1, -1});
  check_close(x.clip(-1.0, 1.0), {-1, -1, 0, 0.5, 1, 1, kNan, 1, -1});
  // min > max: everything becomes max (PyTorch).
  check_close(vec({-1.0, 0.0, 5.0}).clamp(3, 1), {1, 1, 1});
  // A nan bound makes the result nan (torch: clamp([1, nan], 0., nan) = [nan, nan]).
  check_close(vec({1.0, kNan}).clamp(0.0, kNan), {kNan, kNan});
  check_close(vec({0.5, 2.0}, kHalf).clamp(0.0, 1.0), {0.5, 1.0});

  // dtypes: integers stay integers unless a bound is floating; bool with an int bound -> long.
  Tensor i = tensor({-2, 0, 3}, kInt32);
  CHECK(i.clamp(0).dtype() == kInt32);
  check_close(i.clamp(0), {0, 0, 3});
  check_close(i.clamp(-1, 1), {-1, 0, 1});
  Tensor l = tensor({-2, 0, 3}, kLong);
  CHECK(l.clamp(0.5).dtype() == kFloat);
  check_close(l.clamp(0.5), {0.5, 0.5, 3.0});
  CHECK(l.clamp(0, 2.5).dtype() == kFloat);
  CHECK(tensor({true, false}).clamp(0).dtype() == kLong);
  check_close(tensor({true, false}).clamp(0), {1, 0});
  CHECK(tensor({true, false}).clamp(false, true).dtype() == kBool);
  CHECK(vec({1.0}, kHalf).clamp(0.5).dtype() == kHalf);
  check_close(tensor({200, 10}, kUInt8).clamp(20, 100), {100, 20});

  check_error([&] { x.clamp(std::optional<Scalar>(), std::optional<Scalar>()); },
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  check_error([&] { Tensor y = x.clone(); y.clamp_(std::optional<Scalar>()); },
              "torch.clamp: At least one of 'min' or 'max' must not be None");

  // In place.
  Tensor y = x.clone();
  uint32_t v0 = y._version();
  Tensor& r = y.clamp_(-1.0, 1.0);
  CHECK(&r == &y);
  CHECK(y._version() > v0);
  check_close(y, {-1, -1, 0, 0.5, 1, 1, kNan, 1, -1});
  Tensor li = l.clone();
  li.clamp_(0, 2);
  CHECK(li.dtype() == kLong);
  check_close(li, {0, 0, 2});
  check_error([&] { Tensor z = l.clone(); z.clamp_(0.5); }, "result type Float can't be cast to the desired output type Long");
  Tensor a = vec({-2.0, 0.5, 2.0}).requires_grad_(true);
  Tensor b = a * 1.0;
  b.clamp_(-1.0, 1.0);
  (b * 3.0).sum().backward();
  check_close(a.grad(), {0, 3, 0});

  // d/dx = 1 where min <= x <= max (inclusive), else 0, and 0 for nan:
  // torch: clamp([-1, 0, 1, 2], -1, 1) grads [1, 1, 1, 0]; clamp([nan, .5], 0, 1) grads [0, 1].
  Tensor g = vec({-1.0, 0.0, 1.0, 2.0, kNan}).requires_grad_(true);
  g.clamp(-1.0, 1.0).sum().backward();
  check_close(g.grad(), {1, 1, 1, 0, 0});
  check_grads([](const TensorList& in) { return in[0].clamp(-0.5, 1.0); });
  check_grads([](const TensorList& in) { return in[0].clamp_min(0.0); });
  check_grads([](const TensorList& in) { return in[0].clamp_max(0.0); });
  check_gradgrad([](const TensorList& in) { return in[0].clamp(-0.5, 1.0); }, {smooth_leaf()});
}

TEST_CASE("test_activation: clamp with tensor bounds") {
  Tensor x = from_values({-1.7, -0.6, -0.2, 0.3, 0.9, 2.2}, {2, 3});
  Tensor lo = vec({-1.0, 0.0, 0.5});
  Tensor hi = from_values({0.8, 1.5}, {2, 1});
  // Row 0: bounds [-1, 0.8], [0, 0.8], [0.5, 0.8]; row 1: [-1, 1.5], [0, 1.5], [0.5, 1.5].
  check_close(x.clamp(lo, hi), {-1.0, 0.0, 0.5, 0.3, 0.9, 1.5});
  check_close(x.clamp(lo), {-1.0, 0.0, 0.5, 0.3, 0.9, 2.2});
  check_close(x.clamp(std::nullopt, hi), {-1.7, -0.6, -0.2, 0.3, 0.9, 1.5});
  // Output shape broadcasts over all three.
  CHECK(shape(from_values({2.0}, {}).clamp(vec({1.0, 3.0}))) == std::vector<int64_t>{2});
  CHECK(shape(vec({1.0, 2.0}).clamp(std::nullopt, hi)) == std::vector<int64_t>{2, 2});
  // A nan in a bound gives nan; min > max gives max.
  check_close(vec({1.0, kNan}).clamp(from_values({kNan}, {})), {kNan, kNan});
  check_close(vec({1.0, 5.0}).clamp(vec({3.0, 3.0}), vec({2.0, 2.0})), {2.0, 2.0});
  // dtypes follow type promotion over x and the bounds.
  Tensor i = tensor({1, 2}, kLong);
  CHECK(i.clamp(from_values({0.5}, {}, kFloat)).dtype() == kFloat);
  check_close(i.clamp(tensor({0}, kLong), from_values({1.5}, {}, kFloat)), {1.0, 1.5});
  CHECK(tensor({1, 2}, kInt32).clamp(tensor(1, kLong)).dtype() == kInt32);  // 0-dim does not promote
  CHECK(vec({1.0, 2.0}, kHalf).clamp(from_values({1.0}, {}, kDouble)).dtype() == kHalf);
  CHECK(tensor(true).clamp(tensor(false)).dtype() == kBool);
  check_error([&] { x.clamp(std::optional<Tensor>(), std::optional<Tensor>()); },
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  check_error([&] { x.clamp(vec({1.0, 2.0})); }, "must match the size of tensor");

  // PyTorch's clamp_backward_min_max: x = [-1, 0, 1, 2], min = [0, 0, 2, 1], max = 1.5 gives
  // x.grad [0, 1, 0, 0], min.grad [1, 0, 0, 0] (x < min and min < max), max.grad 2 (x > max
  // or max < min, summed over the broadcast).
  Tensor gx = vec({-1.0, 0.0, 1.0, 2.0}).requires_grad_(true);
  Tensor gmin = vec({0.0, 0.0, 2.0, 1.0}).requires_grad_(true);
  Tensor gmax = from_values({1.5}, {}).requires_grad_(true);
  gx.clamp(gmin, gmax).sum().backward();
  check_close(gx.grad(), {0, 1, 0, 0});
  check_close(gmin.grad(), {1, 0, 0, 0});
  check_close(gmax.grad(), {2});

  // gradcheck with respect to x, min and max, with broadcasting and a non-contiguous x.
  Tensor lx = x.clone().requires_grad_(true);
  Tensor llo = lo.clone().requires_grad_(true);
  Tensor lhi = hi.clone().requires_grad_(true);
  Fn both = [](const TensorList& in) { return in[0].clamp(in[1], in[2]); };
  check_grad(both, {lx, llo, lhi});
  check_grad(both, {smooth_noncontiguous(), llo, lhi});
  check_grad([](const TensorList& in) { return in[0].clamp(in[1]); }, {lx, llo});
  check_grad([](const TensorList& in) { return in[0].clamp(std::nullopt, in[1]); }, {lx, lhi});
  check_gradgrad(both, {lx, llo, lhi});
}

TEST_CASE("test_activation: empty and 0-dim tensors") {
  Tensor e = zeros({0, 3}, kDouble);
  std::vector<Tensor> outs = {e.relu(), leaky_relu(e), elu(e), selu(e), gelu(e), gelu(e, "tanh"), silu(e),
                              mish(e), softplus(e), hardtanh(e), relu6(e), e.clamp(0.0, 1.0),
                              e.clamp(zeros({3}, kDouble)), e.clamp_min(0), e.clamp_max(0)};
  for (const Tensor& y : outs) CHECK(shape(y) == std::vector<int64_t>{0, 3});
  Tensor z = e.clone();
  z.relu_();
  z.clamp_(0, 1);
  leaky_relu_(z);
  CHECK(shape(z) == std::vector<int64_t>{0, 3});
  CHECK(shape(zeros({0}, kLong).relu()) == std::vector<int64_t>{0});
  Tensor eg = zeros({0, 2}, kDouble).requires_grad_(true);
  gelu(eg).sum().backward();
  CHECK(shape(eg.grad()) == std::vector<int64_t>{0, 2});

  Tensor s = from_values({-0.5}, {});
  CHECK(s.relu().dim() == 0);
  check_close(s.relu(), {0.0});
  check_close(leaky_relu(s, 0.5), {-0.25});
  check_close(s.clamp(0.0, 1.0), {0.0});
  check_close(s.clamp(from_values({-1.0}, {})), {-0.5});
  check_close(gelu(s), {gelu_ref(-0.5)}, 1e-15, 1e-12);
  check_close(softplus(s), {std::log1p(std::exp(-0.5))}, 1e-15, 1e-12);
}
