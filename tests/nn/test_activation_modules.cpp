// The activation modules libtorch adds beyond ReLU/GELU/...: CELU, GLU, Hardshrink, Hardtanh,
// LogSigmoid, Mish, PReLU, RReLU, ReLU6, SELU, Softmin, Softmax2d, Softplus, Softshrink,
// Softsign, Tanhshrink, Threshold (nn/modules/activation.h, nn/modules/softmax.h) and their
// F:: forms. Values are hand-computed or PyTorch's (tests/nn/fixtures/make_activation_expected.py);
// gradients are float64 gradchecks of the functional forms; reprs, option defaults and error
// texts are PyTorch's.
#include <cmath>
#include <sstream>

#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/softmax.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/softmax.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;
namespace F = ember::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream s;
  s << m;
  return s.str();
}

/// The points tests/nn/fixtures/make_activation_expected.py evaluates.
Tensor points() { return tensor({-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 25.0}, kDouble); }

/// A float64 leaf for gradcheck with no element within `gap` of any of `kinks`.
Tensor leaf_avoiding(IntArrayRef s, std::vector<double> kinks, double lo = -2, double hi = 2, double gap = 0.05) {
  Tensor t = rand_leaf(s, lo, hi).detach();
  NoGradGuard no_grad;
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    for (double k : kinks) {
      if (std::fabs(p[i] - k) < gap) p[i] = k + (p[i] < k ? -2 * gap : 2 * gap);
    }
  }
  return t.requires_grad_(true);
}

}  // namespace

TEST_CASE("activation modules: option defaults and setters are libtorch's") {
  CHECK_FALSE(nn::SELUOptions().inplace());
  CHECK(nn::SELUOptions(true).inplace());
  CHECK(nn::CELUOptions().alpha() == 1.0);
  CHECK_FALSE(nn::CELUOptions().inplace());
  CHECK(nn::GLUOptions().dim() == -1);
  CHECK(nn::GLUOptions(1).dim() == 1);
  CHECK(nn::HardshrinkOptions().lambda() == 0.5);
  CHECK(nn::HardshrinkOptions(1.5).lambda() == 1.5);
  CHECK(nn::HardtanhOptions().min_val() == -1.0);
  CHECK(nn::HardtanhOptions().max_val() == 1.0);
  CHECK_FALSE(nn::HardtanhOptions().inplace());
  CHECK(nn::PReLUOptions().num_parameters() == 1);
  CHECK(nn::PReLUOptions().init() == 0.25);
  CHECK_FALSE(nn::ReLU6Options().inplace());
  CHECK(nn::RReLUOptions().lower() == 1.0 / 8.0);
  CHECK(nn::RReLUOptions().upper() == 1.0 / 3.0);
  CHECK_FALSE(nn::RReLUOptions().inplace());
  CHECK_FALSE(F::RReLUFuncOptions().training());
  CHECK(F::RReLUFuncOptions().lower() == 1.0 / 8.0);
  CHECK(F::RReLUFuncOptions().upper() == 1.0 / 3.0);
  CHECK(nn::SoftplusOptions().beta() == 1.0);
  CHECK(nn::SoftplusOptions().threshold() == 20.0);
  CHECK(nn::SoftshrinkOptions().lambda() == 0.5);
  nn::ThresholdOptions th(0.1, 20);
  CHECK(th.threshold() == 0.1);
  CHECK(th.value() == 20);
  CHECK_FALSE(th.inplace());
  CHECK(nn::SoftminOptions(1).dim() == 1);
  CHECK(F::SoftminFuncOptions(0).dim() == 0);
  CHECK_FALSE(F::SoftminFuncOptions(0).dtype().has_value());
  // The setters chain.
  CHECK(nn::HardtanhOptions().min_val(-2).max_val(3).inplace(true).max_val() == 3);
  CHECK(nn::PReLUOptions().num_parameters(3).init(0.1).num_parameters() == 3);
}

TEST_CASE("activation modules: reprs are Python's") {
  CHECK(repr(nn::CELU()) == "CELU(alpha=1.0)");
  CHECK(repr(nn::CELU(nn::CELUOptions().alpha(0.5).inplace(true))) == "CELU(alpha=0.5, inplace=True)");
  CHECK(repr(nn::GLU()) == "GLU(dim=-1)");
  CHECK(repr(nn::GLU(1)) == "GLU(dim=1)");
  CHECK(repr(nn::Hardshrink()) == "Hardshrink(0.5)");
  CHECK(repr(nn::Hardshrink(1.0)) == "Hardshrink(1.0)");
  CHECK(repr(nn::Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)");
  CHECK(repr(nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(3).inplace(true))) ==
        "Hardtanh(min_val=-2.0, max_val=3.0, inplace=True)");
  CHECK(repr(nn::LogSigmoid()) == "LogSigmoid()");
  CHECK(repr(nn::Mish()) == "Mish()");
  CHECK(repr(nn::PReLU()) == "PReLU(num_parameters=1)");
  CHECK(repr(nn::PReLU(nn::PReLUOptions().num_parameters(3).init(0.1))) == "PReLU(num_parameters=3)");
  CHECK(repr(nn::RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)");
  CHECK(repr(nn::RReLU(nn::RReLUOptions().lower(0.1).upper(0.3).inplace(true))) ==
        "RReLU(lower=0.1, upper=0.3, inplace=True)");
  CHECK(repr(nn::ReLU6()) == "ReLU6()");
  CHECK(repr(nn::ReLU6(true)) == "ReLU6(inplace=True)");
  CHECK(repr(nn::SELU()) == "SELU()");
  CHECK(repr(nn::SELU(true)) == "SELU(inplace=True)");
  CHECK(repr(nn::Softmin(1)) == "Softmin(dim=1)");
  CHECK(repr(nn::Softmax2d()) == "Softmax2d()");
  CHECK(repr(nn::Softplus()) == "Softplus(beta=1.0, threshold=20.0)");
  CHECK(repr(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(10))) == "Softplus(beta=2.0, threshold=10.0)");
  CHECK(repr(nn::Softshrink()) == "Softshrink(0.5)");
  CHECK(repr(nn::Softsign()) == "Softsign()");
  CHECK(repr(nn::Tanhshrink()) == "Tanhshrink()");
  CHECK(repr(nn::Threshold(0.1, 20)) == "Threshold(threshold=0.1, value=20.0)");
  CHECK(repr(nn::Threshold(nn::ThresholdOptions(0.1, 20).inplace(true))) ==
        "Threshold(threshold=0.1, value=20.0, inplace=True)");
}

TEST_CASE("activation modules: piecewise ones, hand-computed") {
  Tensor x = tensor({-1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0}, kDouble);
  // Hardshrink: 0 on the closed [-lambda, lambda].
  check_close(nn::Hardshrink()(x), {-1, 0, 0, 0, 0, 0, 1}, 0);
  check_close(F::hardshrink(x, F::HardshrinkFuncOptions().lambda(0.1)), {-1, -0.5, -0.2, 0, 0.2, 0.5, 1}, 0);
  check_close(ember::hardshrink(x, 0.5), {-1, 0, 0, 0, 0, 0, 1}, 0);
  // Softshrink: moves everything toward 0 by lambda; x * 0 inside keeps the sign of x.
  check_close(nn::Softshrink()(x), {-0.5, 0, 0, 0, 0, 0, 0.5}, 0);
  check_close(F::softshrink(x, F::SoftshrinkFuncOptions(0.25)), {-0.75, -0.25, 0, 0, 0, 0.25, 0.75}, 1e-15);
  CHECK(std::signbit(values(ember::softshrink(x, 0.5))[2]));
  // Threshold: value where x <= threshold (the boundary included).
  check_close(nn::Threshold(0.2, 20)(x), {20, 20, 20, 20, 20, 0.5, 1}, 0);
  check_close(F::threshold(x, F::ThresholdFuncOptions(-0.5, -7)), {-7, -7, -0.2, 0, 0.2, 0.5, 1}, 0);
  // Integer inputs keep their dtype (the value is cast, as in PyTorch: [1, 2, 3] -> [7, 2, 3]).
  Tensor ints = tensor(std::vector<int64_t>{1, 2, 3});
  Tensor ti = ember::threshold(ints, 1.5, 7);
  CHECK(ti.dtype() == kLong);
  check_close(ti, {7, 2, 3}, 0);
  // Hardtanh, ReLU6.
  check_close(nn::Hardtanh()(x), {-1, -0.5, -0.2, 0, 0.2, 0.5, 1}, 0);
  check_close(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.3).max_val(0.4))(x), {-0.3, -0.3, -0.2, 0, 0.2, 0.4, 0.4},
              0);
  check_close(nn::ReLU6()(tensor({-1.0, 3.0, 7.0}, kDouble)), {0, 3, 6}, 0);
  check_close(F::relu6(tensor({-1.0, 6.5}, kDouble)), {0, 6}, 0);
  // nan stays nan through all of them.
  Tensor n = tensor({std::nan("")}, kDouble);
  for (const Tensor& r : {ember::hardshrink(n), ember::softshrink(n), ember::threshold(n, 0.5, 3)})
    CHECK(std::isnan(values(r)[0]));
}

TEST_CASE("activation modules: smooth ones against PyTorch") {
  Tensor x = points();
  // Generated by tests/nn/fixtures/make_activation_expected.py (torch 2.9, float64).
  check_close(nn::SELU()(x), {-1.6705687287671118, -1.1113307378125625, -0.388890197478119, 0.0, 0.5253504936777402,
                              2.101401974710961, 26.26752468388701},
              1e-13, 1e-13);
  check_close(nn::CELU(nn::CELUOptions().alpha(0.5))(x),
              {-0.4987606239116668, -0.43233235838169365, -0.1967346701436833, 0.0, 0.5, 2.0, 25.0}, 1e-13, 1e-13);
  check_close(nn::LogSigmoid()(x), {-3.048587351573742, -1.3132616875182228, -0.8259394198788436, -0.6931471805599453,
                                    -0.4740769841801067, -0.1269280110429725, -1.3887943864867583e-11},
              1e-13, 1e-13);
  check_close(nn::Mish()(x), {-0.1456474612756246, -0.30340146137410895, -0.129926963679141, 0.0, 0.3752452113048951,
                              1.9439589595339946, 25.0},
              1e-13, 1e-13);
  check_close(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(10))(x),
              {0.0012378425688652247, 0.06346400552148625, 0.23703849209005334, 0.34657359027997264,
               0.6566308437591114, 2.0090749639589047, 25.0},
              1e-13, 1e-13);
  check_close(nn::Softsign()(x), {-0.75, -0.5, -0.2, 0.0, 0.3333333333333333, 0.6666666666666666, 0.9615384615384616},
              1e-15, 1e-15);
  check_close(nn::Tanhshrink()(x), {-2.0049452463132695, -0.23840584404423515, -0.005081337596290869, 0.0,
                                    0.03788284273999026, 1.035972419924183, 24.0},
              1e-13, 1e-13);
  // log_sigmoid does not overflow at either end: -1000 stays -1000, +1000 gives -0.
  check_close(F::logsigmoid(tensor({-1000.0, 1000.0}, kDouble)), {-1000, 0}, 0);
  check_close(F::logsigmoid(tensor({-1000.0f, 1000.0f})), {-1000, 0}, 0);
  // celu with alpha 1 is elu.
  check_close(F::celu(x), ember::elu(x), 1e-15);
  check_close(F::selu(x), ember::selu(x), 0);
}

TEST_CASE("activation modules: GLU, Softmin and Softmax2d, hand-computed") {
  // [a | b] along dim 1: a * sigmoid(b); sigmoid(0) = 1/2, sigmoid(ln 3) = 3/4.
  Tensor x = tensor({1.0, 2.0, 0.0, std::log(3.0)}, kDouble).view({1, 4});
  check_close(nn::GLU(1)(x), {0.5, 1.5}, 1e-15);
  check_close(nn::GLU()(x), {0.5, 1.5}, 1e-15);
  check_close(F::glu(x.t(), F::GLUFuncOptions(0)), {0.5, 1.5}, 1e-15);
  CHECK(shape(F::glu(x.t(), F::GLUFuncOptions(0))) == std::vector<int64_t>{2, 1});
  CHECK(shape(nn::GLU()(ember::zeros({2, 3, 6}, kDouble))) == std::vector<int64_t>{2, 3, 3});

  // softmin([0, ln 2]) = e^0, e^{-ln 2} normalised = [2/3, 1/3].
  Tensor s = tensor({0.0, std::log(2.0), std::log(2.0), 0.0}, kDouble).view({2, 2});
  check_close(nn::Softmin(1)(s), {2.0 / 3, 1.0 / 3, 1.0 / 3, 2.0 / 3}, 1e-15);
  check_close(nn::Softmin(0)(s), {2.0 / 3, 1.0 / 3, 1.0 / 3, 2.0 / 3}, 1e-15);
  Tensor sf = F::softmin(s.to(kFloat), F::SoftminFuncOptions(1).dtype(kDouble));
  CHECK(sf.dtype() == kDouble);
  check_close(sf, {2.0 / 3, 1.0 / 3, 1.0 / 3, 2.0 / 3}, 1e-7);

  // Softmax2d normalises over the channels (dim -3) of each pixel: [ln 1, ln 3] -> [1/4, 3/4].
  Tensor c = tensor({0.0, 0.0, std::log(3.0), 0.0}, kDouble).view({2, 1, 2});
  check_close(nn::Softmax2d()(c), {0.25, 0.5, 0.75, 0.5}, 1e-15);
  check_close(nn::Softmax2d()(c.unsqueeze(0)), {0.25, 0.5, 0.75, 0.5}, 1e-15);
}

TEST_CASE("activation modules: PReLU's weight parameter") {
  nn::PReLU one;
  CHECK(one->named_parameters().size() == 1);
  CHECK(one->named_parameters().contains("weight"));
  CHECK(one->named_buffers().size() == 0);
  CHECK(shape(one->weight) == std::vector<int64_t>{1});
  check_close(one->weight, {0.25}, 0);
  CHECK(one->weight.requires_grad());
  // One slope: broadcast everywhere, any rank (0-dim included).
  check_close(one(tensor({-2.0f, 3.0f})), {-0.5, 3}, 0);
  check_close(one(ember::full({}, -4.0f)), {-1}, 0);
  CHECK(one(ember::full({}, -4.0f)).dim() == 0);

  nn::PReLU per(nn::PReLUOptions().num_parameters(3).init(0.1));
  CHECK(shape(per->weight) == std::vector<int64_t>{3});
  {
    NoGradGuard no_grad;
    per->weight.copy_(tensor({0.1f, 0.2f, 0.3f}));
  }
  // (N=2, C=3, L=1): channel c's negatives scaled by weight[c].
  Tensor x = tensor({-1.0f, -1.0f, -1.0f, 2.0f, -10.0f, 0.0f}).view({2, 3, 1});
  check_close(per(x), {-0.1, -0.2, -0.3, 2, -2, 0}, 1e-6);
  // reset_parameters refills with init; a clone (which runs reset) has its own copy.
  per->reset_parameters();
  check_close(per->weight, {0.1, 0.1, 0.1}, 1e-7);
  per->weight.detach().fill_(5);
  auto copy = std::dynamic_pointer_cast<nn::PReLUImpl>(per->clone());
  REQUIRE(copy);
  check_close(copy->weight, {5, 5, 5}, 0);
  CHECK(copy->weight.data_ptr() != per->weight.data_ptr());
  CHECK(copy->parameters().size() == 1);
  per->reset_parameters();
  // Training the slope: d/dw of sum(prelu(x)) is the sum of the non-positive inputs of each channel.
  Tensor y = per(x).sum();
  y.backward();
  check_close(per->weight.grad(), {-1, -11, -1}, 1e-6);
  // The functional form.
  check_close(F::prelu(tensor({-1.0, 2.0}, kDouble), tensor({0.5}, kDouble)), {-0.5, 2}, 0);
  check_close(F::prelu(tensor({-1.0, 2.0}, kDouble), ember::full({}, 0.5, kDouble)), {-0.5, 2}, 0);
}

TEST_CASE("activation modules: RReLU in eval uses the mean slope; training draws it per element") {
  Tensor x = tensor({-4.0, -1.0, 0.0, 2.0}, kDouble);
  nn::RReLU r(nn::RReLUOptions().lower(0.1).upper(0.3));
  r->eval();
  check_close(r(x), {-0.8, -0.2, 0, 2}, 1e-15);
  check_close(F::rrelu(x), {-4 * (1.0 / 8 + 1.0 / 3) / 2, -(1.0 / 8 + 1.0 / 3) / 2, 0, 2}, 1e-15);

  // Training: each negative element gets its own slope in [lower, upper]; positives pass.
  r->train();
  manual_seed(7);
  Tensor big = ember::full({4000}, -1.0, kDouble).requires_grad_(true);
  Tensor out = r(big);
  std::vector<double> slopes = values(-out);
  double lo = 1, hi = 0, sum = 0;
  for (double s : slopes) {
    lo = std::min(lo, s);
    hi = std::max(hi, s);
    sum += s;
  }
  CHECK(lo >= 0.1);
  CHECK(hi <= 0.3);
  CHECK(hi - lo > 0.19);                           // they spread over the interval...
  CHECK(std::fabs(sum / 4000 - 0.2) < 0.01);       // ...around its middle (sd of the mean ~0.0009)
  // The gradient of each element is its sampled slope.
  out.sum().backward();
  check_close(big.grad(), slopes, 1e-15);
  // Positives are untouched and get gradient 1; the same seed repeats the draws.
  manual_seed(7);
  Tensor again = r(-ember::ones({4000}, kDouble));
  check_close(-again, slopes, 0);
  Tensor pos = tensor({0.5, 3.0}, kDouble).requires_grad_(true);
  Tensor po = F::rrelu(pos, F::RReLUFuncOptions().training(true));
  check_close(po, {0.5, 3}, 0);
  po.sum().backward();
  check_close(pos.grad(), {1, 1}, 0);
}

TEST_CASE("activation modules: float64 gradchecks of the functional forms") {
  manual_seed(1);
  auto one = [](auto f) { return [f](const TensorList& in) { return f(in[0]); }; };
  check_grad(one([](const Tensor& t) { return F::selu(t); }), {leaf_avoiding({3, 4}, {0})});
  check_grad(one([](const Tensor& t) { return F::celu(t, F::CELUFuncOptions().alpha(0.7)); }),
             {leaf_avoiding({3, 4}, {0})});
  check_grad(one([](const Tensor& t) { return F::hardshrink(t, F::HardshrinkFuncOptions().lambda(0.5)); }),
             {leaf_avoiding({3, 4}, {-0.5, 0.5})});
  check_grad(one([](const Tensor& t) { return F::softshrink(t, F::SoftshrinkFuncOptions(0.5)); }),
             {leaf_avoiding({3, 4}, {-0.5, 0.5})});
  check_grad(one([](const Tensor& t) { return F::threshold(t, F::ThresholdFuncOptions(0.3, -2)); }),
             {leaf_avoiding({3, 4}, {0.3})});
  check_grad(one([](const Tensor& t) { return F::hardtanh(t, F::HardtanhFuncOptions().min_val(-0.5).max_val(1)); }),
             {leaf_avoiding({3, 4}, {-0.5, 1})});
  check_grad(one([](const Tensor& t) { return F::relu6(t); }), {leaf_avoiding({3, 4}, {0, 6}, -2, 8)});
  check_grad(one([](const Tensor& t) { return F::logsigmoid(t); }), {rand_leaf({3, 4}, -6, 6)});
  check_grad(one([](const Tensor& t) { return F::mish(t); }), {rand_leaf({3, 4}, -4, 4)});
  check_grad(one([](const Tensor& t) { return F::softplus(t, F::SoftplusFuncOptions().beta(2).threshold(3)); }),
             {leaf_avoiding({3, 4}, {1.5})});
  check_grad(one([](const Tensor& t) { return F::softsign(t); }), {leaf_avoiding({3, 4}, {0})});
  check_grad(one([](const Tensor& t) { return F::tanhshrink(t); }), {rand_leaf({3, 4})});
  check_grad(one([](const Tensor& t) { return F::glu(t, F::GLUFuncOptions(1)); }), {rand_leaf({3, 4})});
  check_grad(one([](const Tensor& t) { return F::glu(t); }), {rand_leaf({2, 3, 6})});
  check_grad(one([](const Tensor& t) { return F::softmin(t, F::SoftminFuncOptions(1)); }), {rand_leaf({3, 4})});
  check_grad(one([](const Tensor& t) { return nn::Softmax2d()(t); }), {rand_leaf({2, 3, 2, 2})});
  check_grad(one([](const Tensor& t) { return F::rrelu(t); }), {leaf_avoiding({3, 4}, {0})});
  // PReLU with respect to the input and the weight, one slope and one per channel.
  auto prelu = [](const TensorList& in) { return F::prelu(in[0], in[1]); };
  check_grad(prelu, {leaf_avoiding({2, 3, 4}, {0}), rand_leaf({3}, 0.05, 0.5)});
  check_grad(prelu, {leaf_avoiding({2, 3}, {0}), rand_leaf({1}, 0.05, 0.5)});
  check_gradgrad(prelu, {leaf_avoiding({2, 3}, {0}), rand_leaf({3}, 0.05, 0.5)});
  check_gradgrad(one([](const Tensor& t) { return F::logsigmoid(t); }), {rand_leaf({5})});
  check_gradgrad(one([](const Tensor& t) { return F::glu(t); }), {rand_leaf({2, 4})});
  // RReLU while training: the gradient is the sampled slope, the draw fixed by reseeding.
  auto rrelu_train = [](const TensorList& in) {
    manual_seed(3);
    return F::rrelu(in[0], F::RReLUFuncOptions().training(true));
  };
  check_grad(rrelu_train, {leaf_avoiding({3, 4}, {0})});
}

TEST_CASE("activation modules: inplace options write into the input") {
  auto x = [] { return tensor({-2.0, 0.5, 8.0}, kDouble); };
  Tensor a = x();
  nn::ReLU6(true)(a);
  check_close(a, {0, 0.5, 6}, 0);
  Tensor b = x();
  nn::Hardtanh(nn::HardtanhOptions().inplace(true))(b);
  check_close(b, {-1, 0.5, 1}, 0);
  Tensor c = x();
  nn::Threshold(nn::ThresholdOptions(1, -5).inplace(true))(c);
  check_close(c, {-5, -5, 8}, 0);
  Tensor d = x();
  nn::SELU(true)(d);
  check_close(d, ember::selu(x()), 0);
  Tensor e = x();
  nn::CELU(nn::CELUOptions().alpha(2).inplace(true))(e);
  check_close(e, ember::celu(x(), 2), 0);
  Tensor f = x();
  nn::RReLU rr(nn::RReLUOptions().lower(0.2).upper(0.2).inplace(true));
  rr(f);
  check_close(f, {-0.4, 0.5, 8}, 1e-15);
  // Without inplace the input is left alone.
  Tensor g = x();
  nn::ReLU6()(g);
  check_close(g, {-2, 0.5, 8}, 0);
}

TEST_CASE("activation modules: PyTorch's errors") {
  check_error([] { F::glu(ember::zeros({2, 3})); }, "Halving dimension must be even, but dimension 1 is size 3");
  check_error([] { nn::GLU(0)(ember::zeros({3, 2})); }, "Halving dimension must be even, but dimension 0 is size 3");
  check_error([] { F::glu(ember::zeros({})); }, "glu does not support scalars because halving size must be even");
  check_error([] { F::glu(ember::zeros({4}), F::GLUFuncOptions(1)); }, "Dimension out of range");
  check_error([] { F::glu(ember::zeros({2, 4}, kLong)); }, "\"glu\" not implemented for 'Long'");
  check_error([] { nn::Softmax2d()(ember::zeros({2})); }, "Softmax2d: expected input to be 3D or 4D, got 1D instead");
  check_error([] { nn::Softmax2d()(ember::zeros({1, 2, 3, 4, 5})); },
              "Softmax2d: expected input to be 3D or 4D, got 5D instead");
  check_error([] { F::softshrink(ember::zeros({2}), F::SoftshrinkFuncOptions(-1.0)); },
              "lambda must be greater or equal to 0, but found to be -1.");
  check_error([] { F::rrelu(ember::zeros({2}), F::RReLUFuncOptions().lower(0.5).upper(0.1).training(true)); },
              "Lower bound should be less than or equal to the upper bound");
  check_error([] { nn::RReLU(nn::RReLUOptions().lower(0.5).upper(0.1))(ember::zeros({2})); },
              "Lower bound should be less than or equal to the upper bound");
  check_error([] { F::celu(ember::zeros({3}), F::CELUFuncOptions().alpha(0)); },
              "ZeroDivisionError: alpha cannot be 0 for CELU");
  check_error([] { nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(0)); }, "max_val must be greater than min_val");
  check_error([] { F::prelu(ember::zeros({2, 3}), ember::zeros({2})); },
              "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 and channel size = 3.");
  check_error([] { F::prelu(ember::zeros({3}), ember::zeros({3})); },
              "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel size = 1.");
  check_error([] { F::prelu(ember::zeros({}), ember::zeros({3})); }, "Not allow zero-dim input tensor.");
  check_error([] { F::prelu(ember::zeros({2, 3}), ember::zeros({3, 1})); },
              "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2");
  check_error([] { nn::PReLU(nn::PReLUOptions().num_parameters(3))(ember::zeros({2, 4})); },
              "Found parameter numbers = 3 and channel size = 4.");
  check_error([] { F::hardshrink(ember::zeros({2}, kLong)); }, "\"hardshrink\" not implemented for 'Long'");
  check_error([] { F::softshrink(ember::zeros({2}, kLong)); }, "\"softshrink\" not implemented for 'Long'");
  check_error([] { F::logsigmoid(ember::zeros({2}, kLong)); }, "not implemented for 'Long'");
  check_error([] { F::threshold(ember::zeros({2}, kBool), F::ThresholdFuncOptions(0.5, 1)); },
              "\"threshold\" not implemented for 'Bool'");
  check_error([] { F::softmin(ember::zeros({2, 3}), F::SoftminFuncOptions(2)); }, "Dimension out of range");
}
