// Unary math ops (core/ops/unary.cpp): values against std:: math computed here, float64
// gradcheck (also on non-contiguous input) and gradgradcheck, dtype promotion, in-place forms,
// error texts, empty and 0-dim tensors. Activations and clamp: test_activation.cpp.
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
using ember::test::values;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A float-producing unary op: the op, its in-place form, a std:: reference, and a range
/// where it is smooth (for gradcheck).
struct FloatOp {
  const char* name;
  Tensor (*op)(const Tensor&);
  Tensor& (*inplace)(Tensor&);
  double (*ref)(double);
  double lo, hi;
};

const std::vector<FloatOp>& float_ops() {
  static const std::vector<FloatOp> ops = {
      {"exp", [](const Tensor& t) { return t.exp(); }, [](Tensor& t) -> Tensor& { return t.exp_(); },
       [](double v) { return std::exp(v); }, -2, 2},
      {"exp2", [](const Tensor& t) { return t.exp2(); }, [](Tensor& t) -> Tensor& { return t.exp2_(); },
       [](double v) { return std::pow(2.0, v); }, -2, 2},
      {"expm1", [](const Tensor& t) { return t.expm1(); }, [](Tensor& t) -> Tensor& { return t.expm1_(); },
       [](double v) { return std::expm1(v); }, -2, 2},
      {"log", [](const Tensor& t) { return t.log(); }, [](Tensor& t) -> Tensor& { return t.log_(); },
       [](double v) { return std::log(v); }, 0.5, 2},
      {"log2", [](const Tensor& t) { return t.log2(); }, [](Tensor& t) -> Tensor& { return t.log2_(); },
       [](double v) { return std::log(v) / std::log(2.0); }, 0.5, 2},
      {"log10", [](const Tensor& t) { return t.log10(); }, [](Tensor& t) -> Tensor& { return t.log10_(); },
       [](double v) { return std::log(v) / std::log(10.0); }, 0.5, 2},
      {"log1p", [](const Tensor& t) { return t.log1p(); }, [](Tensor& t) -> Tensor& { return t.log1p_(); },
       [](double v) { return std::log1p(v); }, -0.5, 1},
      {"sqrt", [](const Tensor& t) { return t.sqrt(); }, [](Tensor& t) -> Tensor& { return t.sqrt_(); },
       [](double v) { return std::sqrt(v); }, 0.5, 2},
      {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }, [](Tensor& t) -> Tensor& { return t.rsqrt_(); },
       [](double v) { return 1.0 / std::sqrt(v); }, 0.5, 2},
      {"reciprocal", [](const Tensor& t) { return t.reciprocal(); },
       [](Tensor& t) -> Tensor& { return t.reciprocal_(); }, [](double v) { return 1.0 / v; }, 0.5, 2},
      {"sin", [](const Tensor& t) { return t.sin(); }, [](Tensor& t) -> Tensor& { return t.sin_(); },
       [](double v) { return std::sin(v); }, -2, 2},
      {"cos", [](const Tensor& t) { return t.cos(); }, [](Tensor& t) -> Tensor& { return t.cos_(); },
       [](double v) { return std::cos(v); }, -2, 2},
      {"tan", [](const Tensor& t) { return t.tan(); }, [](Tensor& t) -> Tensor& { return t.tan_(); },
       [](double v) { return std::sin(v) / std::cos(v); }, -1, 1},
      {"asin", [](const Tensor& t) { return t.asin(); }, [](Tensor& t) -> Tensor& { return t.asin_(); },
       [](double v) { return std::asin(v); }, -0.8, 0.8},
      {"acos", [](const Tensor& t) { return t.acos(); }, [](Tensor& t) -> Tensor& { return t.acos_(); },
       [](double v) { return std::acos(v); }, -0.8, 0.8},
      {"atan", [](const Tensor& t) { return t.atan(); }, [](Tensor& t) -> Tensor& { return t.atan_(); },
       [](double v) { return std::atan(v); }, -2, 2},
      {"sinh", [](const Tensor& t) { return t.sinh(); }, [](Tensor& t) -> Tensor& { return t.sinh_(); },
       [](double v) { return std::sinh(v); }, -2, 2},
      {"cosh", [](const Tensor& t) { return t.cosh(); }, [](Tensor& t) -> Tensor& { return t.cosh_(); },
       [](double v) { return std::cosh(v); }, -2, 2},
      {"tanh", [](const Tensor& t) { return t.tanh(); }, [](Tensor& t) -> Tensor& { return t.tanh_(); },
       [](double v) { return std::tanh(v); }, -2, 2},
      {"asinh", [](const Tensor& t) { return asinh(t); }, [](Tensor& t) -> Tensor& { return asinh_(t); },
       [](double v) { return std::asinh(v); }, -2, 2},
      {"acosh", [](const Tensor& t) { return acosh(t); }, [](Tensor& t) -> Tensor& { return acosh_(t); },
       [](double v) { return std::acosh(v); }, 1.1, 3},
      {"atanh", [](const Tensor& t) { return atanh(t); }, [](Tensor& t) -> Tensor& { return atanh_(t); },
       [](double v) { return std::atanh(v); }, -0.8, 0.8},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }, [](Tensor& t) -> Tensor& { return t.sigmoid_(); },
       [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, -3, 3},
      {"erf", [](const Tensor& t) { return t.erf(); }, [](Tensor& t) -> Tensor& { return t.erf_(); },
       [](double v) { return std::erf(v); }, -2, 2},
      {"erfc", [](const Tensor& t) { return t.erfc(); }, [](Tensor& t) -> Tensor& { return t.erfc_(); },
       [](double v) { return std::erfc(v); }, -2, 2},
  };
  return ops;
}

// Negative, zero, small, large, and the non-finite values.
const std::vector<double> kInputs = {-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.5, 40.0, kNan, kInf, -kInf};

std::vector<double> map(const std::vector<double>& xs, double (*f)(double)) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}

/// What a float32 kernel should give: the double result rounded to float (inf past its range).
std::vector<double> as_float32(const std::vector<double>& xs) {
  std::vector<double> out;
  for (double x : xs) out.push_back(static_cast<double>(static_cast<float>(x)));
  return out;
}

/// A float64 leaf of `shape` with values uniform in [lo, hi).
Tensor leaf_in(IntArrayRef shape, double lo, double hi) { return ember::test::rand_leaf(shape, lo, hi); }

/// A non-contiguous float64 leaf (a transposed 3x2 buffer), values in [lo, hi).
Tensor noncontiguous_leaf(double lo, double hi) {
  Tensor t = (rand({3, 2}, kDouble) * (hi - lo) + lo).t().detach().requires_grad_(true);
  REQUIRE(!t.is_contiguous());
  return t;
}

}  // namespace

TEST_CASE("test_unary: float ops match std math in float64 and float32") {
  for (const FloatOp& op : float_ops()) {
    INFO("op: " << std::string(op.name));
    std::vector<double> expected = map(kInputs, op.ref);
    Tensor x64 = from_values(kInputs, {static_cast<int64_t>(kInputs.size())});
    Tensor y64 = op.op(x64);
    CHECK(y64.dtype() == kDouble);
    check_close(y64, expected, 1e-14, 1e-12);

    Tensor y32 = op.op(x64.to(kFloat));
    CHECK(y32.dtype() == kFloat);
    check_close(y32, as_float32(expected), 1e-6, 2e-6);

    // Half computes in float and rounds once.
    Tensor yh = op.op(from_values({-1.0, 0.5, 1.0}, {3}, kHalf));
    CHECK(yh.dtype() == kHalf);
    check_close(yh, map({-1.0, 0.5, 1.0}, op.ref), 1e-3, 1e-3);
  }
}

TEST_CASE("test_unary: hand-worked values") {
  Tensor x = from_values({-2.0, 0.0, 3.0}, {3});
  check_close(x.exp2(), {0.25, 1.0, 8.0});              // 2^-2, 2^0, 2^3
  check_close(from_values({8.0, 1.0, 0.001}, {3}).log2(), {3.0, 0.0, std::log2(0.001)});
  check_close(from_values({100.0, 1.0, 0.1}, {3}).log10(), {2.0, 0.0, -1.0}, 1e-12);
  check_close(from_values({4.0, 0.25}, {2}).rsqrt(), {0.5, 2.0});   // 1/sqrt(4), 1/sqrt(1/4)
  check_close(from_values({1e-10}, {1}).expm1(), {1.00000000005e-10}, 0, 1e-12);  // e^x-1 ~ x + x^2/2
  check_close(from_values({1e-10}, {1}).log1p(), {9.9999999995e-11}, 0, 1e-12);   // ~ x - x^2/2
  check_close(from_values({-50.0, 50.0}, {2}).sigmoid(), {1.0 / (1.0 + std::exp(50.0)), 1.0}, 0, 1e-12);
}

TEST_CASE("test_unary: integer and bool inputs promote to the default float dtype") {
  Tensor i = tensor({-2, 0, 3}, kLong);
  for (const FloatOp& op : float_ops()) {
    INFO("op: " << std::string(op.name));
    Tensor y = op.op(i);
    CHECK(y.dtype() == kFloat);
    check_close(y, as_float32(map({-2.0, 0.0, 3.0}, op.ref)), 1e-6, 2e-6);
    Tensor b = op.op(tensor({true, false}));
    CHECK(b.dtype() == kFloat);
    check_close(b, as_float32(map({1.0, 0.0}, op.ref)), 1e-6, 2e-6);
  }
  CHECK(tensor({1, 2}, kInt8).sqrt().dtype() == kFloat);
  CHECK(from_values({1.0}, {1}, kBFloat16).exp().dtype() == kBFloat16);
  set_default_dtype(kDouble);
  CHECK(tensor({1, 2}, kInt32).exp().dtype() == kDouble);
  set_default_dtype(kFloat);
}

TEST_CASE("test_unary: in-place float ops (values, version, autograd through a non-leaf)") {
  for (const FloatOp& op : float_ops()) {
    INFO("op: " << std::string(op.name));
    Tensor x = from_values({0.25, 0.5, 0.75, 1.5}, {2, 2});
    Tensor y = x.clone();
    uint32_t v0 = y._version();
    Tensor& r = op.inplace(y);
    CHECK(&r == &y);
    CHECK(y._version() > v0);
    check_close(y, map({0.25, 0.5, 0.75, 1.5}, op.ref), 1e-14, 1e-12);

    // In place on a non-contiguous view writes through to the base.
    Tensor base = from_values({0.25, 0.5, 0.75, 1.5}, {2, 2});
    Tensor view = base.t();
    op.inplace(view);
    check_close(base, map({0.25, 0.5, 0.75, 1.5}, op.ref), 1e-14, 1e-12);

    // Autograd through the in-place op on a non-leaf matches the out-of-place gradient.
    Tensor a = leaf_in({2, 3}, op.lo, op.hi);
    Tensor b = a * 1.0;
    op.inplace(b);
    CHECK(b.grad_fn() != nullptr);
    (b * b).sum().backward();
    Tensor a2 = a.detach().clone().requires_grad_(true);
    Tensor c = op.op(a2);
    (c * c).sum().backward();
    check_close(a.grad(), a2.grad(), 1e-12, 1e-10);

    // Integer and bool tensors cannot hold the float result.
    check_error([&] { Tensor i = tensor({1, 2}, kLong); op.inplace(i); },
                "result type Float can't be cast to the desired output type Long");
    check_error([&] { Tensor i = tensor({true, false}); op.inplace(i); },
                "result type Float can't be cast to the desired output type Bool");
  }
  check_error([] { Tensor a = ones({2}, kDouble).requires_grad_(true); a.exp_(); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("test_unary: gradcheck and gradgradcheck of the float ops") {
  manual_seed(1);
  for (const FloatOp& op : float_ops()) {
    INFO("op: " << std::string(op.name));
    auto fn = [&op](const TensorList& in) { return op.op(in[0]); };
    check_grad(fn, {leaf_in({2, 3}, op.lo, op.hi)});
    check_grad(fn, {noncontiguous_leaf(op.lo, op.hi)});
    check_grad(fn, {leaf_in({}, op.lo, op.hi)});  // 0-dim
    check_gradgrad(fn, {leaf_in({2, 2}, op.lo, op.hi)});
  }
}

TEST_CASE("test_unary: backward reuses saved outputs and detects their modification") {
  // exp saves its output: changing it in place must be caught at backward.
  Tensor x = from_values({0.5, 1.0}, {2}).requires_grad_(true);
  Tensor y = x.exp();
  y.mul_(2.0);
  check_error([&] { y.sum().backward(); }, "modified by an inplace operation");
  // log saves its input: modifying the output is fine.
  Tensor x2 = from_values({0.5, 1.0}, {2}).requires_grad_(true);
  Tensor z = x2.log();
  z.mul_(2.0);
  z.sum().backward();
  check_close(x2.grad(), {2.0 / 0.5, 2.0 / 1.0});  // d/dx 2 ln x = 2/x
  CHECK(x.exp().grad_fn()->name() == "ExpBackward0");
  CHECK(x.sigmoid().grad_fn()->name() == "SigmoidBackward0");
  CHECK(x.tanh().grad_fn()->name() == "TanhBackward0");
}

TEST_CASE("test_unary: neg, abs, sign, square keep integer dtypes") {
  Tensor i = tensor({-3, 0, 4}, kLong);
  CHECK(i.abs().dtype() == kLong);
  check_close(i.abs(), {3, 0, 4});
  check_close(i.sign(), {-1, 0, 1});
  CHECK(i.square().dtype() == kLong);
  check_close(i.square(), {9, 0, 16});
  check_close(tensor({-5, 7}, kInt8).abs(), {5, 7});
  CHECK(tensor({-5, 7}, kInt16).square().dtype() == kInt16);
  Tensor u = tensor({200, 0}, kUInt8);
  CHECK(u.abs().dtype() == kUInt8);
  check_close(u.abs(), {200, 0});
  check_close(u.sign(), {1, 0});
  check_close(u.neg(), {56, 0});  // wraps modulo 256, as PyTorch
  // bool: sign is the identity, square promotes to long, abs and neg are errors.
  Tensor b = tensor({true, false});
  CHECK(b.sign().dtype() == kBool);
  check_close(b.sign(), {1, 0});
  CHECK(b.square().dtype() == kLong);
  check_close(b.square(), {1, 0});
  check_error([&] { b.abs(); }, "\"abs\" not implemented for 'Bool'");
  check_error([&] { Tensor c = b.clone(); c.abs_(); }, "\"abs\" not implemented for 'Bool'");
  check_error([&] { -b; }, "Negation, the `-` operator, on a bool tensor is not supported.");
  check_error([&] { Tensor c = b.clone(); c.square_(); },
              "result type Long can't be cast to the desired output type Bool");

  Tensor f = from_values({-2.5, -0.0, 0.0, 3.0, kNan, -kInf, kInf}, {7});
  check_close(f.abs(), {2.5, 0.0, 0.0, 3.0, kNan, kInf, kInf});
  CHECK(!std::signbit(values(f.abs())[1]));  // |-0| = +0
  check_close(f.sign(), {-1, 0, 0, 1, 0, -1, 1});  // sign(nan) = 0 (PyTorch 1.13)
  check_close(f.square(), {6.25, 0, 0, 9, kNan, kInf, kInf});
  check_close(f.neg(), {2.5, 0.0, -0.0, -3.0, kNan, kInf, -kInf});
  check_close(from_values({-1.5, 2.0}, {2}, kHalf).abs(), {1.5, 2.0});

  // In-place integer forms.
  Tensor j = i.clone();
  uint32_t v0 = j._version();
  j.abs_();
  CHECK(j._version() > v0);
  check_close(j, {3, 0, 4});
  j = i.clone();
  j.sign_();
  check_close(j, {-1, 0, 1});
  j = i.clone();
  j.square_();
  check_close(j, {9, 0, 16});
  j = i.clone();
  j.neg_();
  check_close(j, {3, 0, -4});
}

TEST_CASE("test_unary: gradients of abs, sign, square, neg") {
  // d|x|/dx = sign(x), 0 at 0.
  Tensor x = from_values({-2.0, 0.0, 3.0}, {3}).requires_grad_(true);
  x.abs().sum().backward();
  check_close(x.grad(), {-1, 0, 1});
  x.mutable_grad().reset();
  x.sign().sum().backward();
  check_close(x.grad(), {0, 0, 0});
  x.mutable_grad().reset();
  x.square().sum().backward();
  check_close(x.grad(), {-4, 0, 6});  // 2x
  CHECK(x.square().grad_fn()->name() == "PowBackward0");

  Tensor a = from_values({-1.5, -0.3, 0.2, 0.7, 1.1, -2.0}, {2, 3}).requires_grad_(true);
  Tensor nc = from_values({-1.5, -0.3, 0.2, 0.7, 1.1, -2.0}, {3, 2}).t().detach().requires_grad_(true);
  for (auto fn : {+[](const TensorList& in) { return in[0].abs(); }, +[](const TensorList& in) { return in[0].square(); },
                  +[](const TensorList& in) { return in[0].neg(); }, +[](const TensorList& in) { return in[0].sign(); }}) {
    check_grad(fn, {a});
    check_grad(fn, {nc});
    check_gradgrad(fn, {a});
  }
}

TEST_CASE("test_unary: floor, ceil, round, trunc, frac") {
  Tensor x = from_values({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7, kNan, kInf, -kInf}, {11});
  check_close(x.floor(), {-3, -2, -1, 0, 1, 2, 2, -3, kNan, kInf, -kInf});
  check_close(x.ceil(), {-2, -1, -0.0, 1, 2, 3, 3, -2, kNan, kInf, -kInf});
  check_close(x.round(), {-2, -2, -0.0, 0, 2, 2, 3, -3, kNan, kInf, -kInf});  // halves to even
  check_close(x.trunc(), {-2, -1, -0.0, 0, 1, 2, 2, -2, kNan, kInf, -kInf});
  check_close(x.frac(), {-0.5, -0.5, -0.5, 0.5, 0.5, 0.5, 0.7, -0.7, kNan, kNan, kNan}, 1e-12);
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) {
    Tensor y = from_values({-1.5, 0.5, 2.5, 3.25}, {4}, t);
    CHECK(y.floor().dtype() == t);
    check_close(y.floor(), {-2, 0, 2, 3});
    check_close(y.round(), {-2, 0, 2, 3});
  }

  // round(decimals): scale by 10^d, round half to even, scale back (PyTorch's algorithm).
  // torch.round(torch.tensor([1.2345, 2.5, -0.55, 1234.5]), decimals=1) -> [1.2, 2.5, -0.6, 1234.5]
  check_close(from_values({1.2345, 2.5, -0.55, 1234.5}, {4}, kFloat).round(1), {1.2, 2.5, -0.6, 1234.5}, 1e-6);
  // 0.125 * 100 = 12.5 rounds to 12 -> 0.12;  -1.45 * 10 = -14.5 -> -14 -> -1.4 (float64)
  check_close(from_values({0.125, -1.45, 2.0}, {3}).round(2), {0.12, -1.45, 2.0}, 1e-12);
  check_close(from_values({-1.45}, {1}).round(1), {-1.4}, 1e-12);
  // negative decimals round to tens, hundreds: 1234.5 / 100 = 12.345 -> 12 -> 1200; 1250 -> 12.5 -> 12
  check_close(from_values({1234.5, 1250.0, -1351.0}, {3}).round(-2), {1200.0, 1200.0, -1400.0});
  check_close(from_values({kInf, kNan}, {2}).round(3), {kInf, kNan});
  CHECK(from_values({1.0}, {1}, kHalf).round(1).dtype() == kHalf);

  // Integers are already whole: identity, same dtype.
  Tensor i = tensor({-2, 0, 3}, kInt32);
  for (Tensor r : {i.floor(), i.ceil(), i.round(), i.trunc()}) {
    CHECK(r.dtype() == kInt32);
    check_close(r, {-2, 0, 3});
  }
  Tensor j = i.clone();
  j.floor_();
  check_close(j, {-2, 0, 3});
  check_error([&] { i.round(1); }, "\"round\" not implemented for 'Int'");
  check_error([&] { tensor({1, 2}, kLong).frac(); }, "\"frac\" not implemented for 'Long'");
  check_error([&] { tensor({true}).floor(); }, "\"floor\" not implemented for 'Bool'");
  check_error([&] { tensor({true}).ceil(); }, "\"ceil\" not implemented for 'Bool'");
  check_error([&] { tensor({true}).round(); }, "\"round\" not implemented for 'Bool'");
  check_error([&] { tensor({true}).trunc(); }, "\"trunc\" not implemented for 'Bool'");

  // In place.
  Tensor y = from_values({-1.5, 2.5, 0.7}, {3});
  uint32_t v0 = y._version();
  y.round_();
  CHECK(y._version() > v0);
  check_close(y, {-2, 2, 1});
  y = from_values({-1.5, 2.5, 0.7}, {3});
  y.ceil_();
  check_close(y, {-1, 3, 1});
  y = from_values({-1.5, 2.5, 0.7}, {3});
  y.trunc_();
  check_close(y, {-1, 2, 0});
  y = from_values({-1.5, 2.5, 0.7}, {3});
  y.frac_();
  check_close(y, {-0.5, 0.5, 0.7}, 1e-12);
}

TEST_CASE("test_unary: gradients of the rounding ops") {
  // Piecewise constant: gradient zero (frac: one).
  Tensor a = from_values({-1.3, -0.6, 0.2, 0.7, 1.1, 2.4}, {2, 3}).requires_grad_(true);
  Tensor nc = from_values({-1.3, -0.6, 0.2, 0.7, 1.1, 2.4}, {3, 2}).t().detach().requires_grad_(true);
  std::vector<Tensor (*)(const TensorList&)> fns = {
      [](const TensorList& in) { return in[0].floor(); }, [](const TensorList& in) { return in[0].ceil(); },
      [](const TensorList& in) { return in[0].round(); }, [](const TensorList& in) { return in[0].trunc(); },
      [](const TensorList& in) { return in[0].round(2); }, [](const TensorList& in) { return in[0].frac(); }};
  for (auto fn : fns) {
    check_grad(fn, {a});
    check_grad(fn, {nc});
  }
  Tensor x = from_values({-1.5, 0.5, 2.5}, {3}).requires_grad_(true);
  (x.floor() + x.round() + x.ceil() + x.trunc()).sum().backward();
  check_close(x.grad(), {0, 0, 0});
  x.mutable_grad().reset();
  x.frac().sum().backward();
  check_close(x.grad(), {1, 1, 1});
}

TEST_CASE("test_unary: logical_not") {
  Tensor f = from_values({0.0, -0.0, 2.5, kNan}, {4});
  Tensor r = f.logical_not();
  CHECK(r.dtype() == kBool);
  check_close(r, {1, 1, 0, 0});  // nan is truthy
  check_close(tensor({0, 3, -1}, kLong).logical_not(), {1, 0, 0});
  check_close(tensor({true, false}).logical_not(), {0, 1});
  check_close(~tensor({true, false}), {0, 1});
  check_close(from_values({0.0, 1.0}, {2}, kHalf).logical_not(), {1, 0});
  // In place keeps self's dtype and writes 1/0.
  Tensor g = from_values({0.0, 2.0}, {2}, kFloat);
  uint32_t v0 = g._version();
  g.logical_not_();
  CHECK(g.dtype() == kFloat);
  CHECK(g._version() > v0);
  check_close(g, {1.0, 0.0});
  Tensor i = tensor({0, 2}, kLong);
  i.logical_not_();
  CHECK(i.dtype() == kLong);
  check_close(i, {1, 0});
  // Not differentiable: a bool output has no grad_fn.
  Tensor x = from_values({1.0}, {1}).requires_grad_(true);
  CHECK(!x.logical_not().requires_grad());
}

TEST_CASE("test_unary: nan_to_num") {
  Tensor x = from_values({kNan, kInf, -kInf, 1.5}, {4});
  check_close(x.nan_to_num(), {0.0, std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), 1.5});
  check_close(x.to(kFloat).nan_to_num(),
              {0.0, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1.5});
  check_close(x.to(kHalf).nan_to_num(), {0.0, 65504.0, -65504.0, 1.5});
  // torch.nan_to_num(torch.tensor([nan, inf], dtype=torch.bfloat16)) -> [0, 3.3895e+38]
  check_close(x.to(kBFloat16).nan_to_num(), {0.0, 3.3895313892515355e38, -3.3895313892515355e38, 1.5});
  check_close(ember::nan_to_num(x, 1.0, 2.0, -3.0), {1.0, 2.0, -3.0, 1.5});
  check_close(ember::nan_to_num(x, std::nullopt, 7.0), {0.0, 7.0, std::numeric_limits<double>::lowest(), 1.5});
  // Integers and bools have nothing to replace.
  Tensor i = tensor({-2, 0, 3}, kLong);
  Tensor ri = i.nan_to_num(1.5);
  CHECK(ri.dtype() == kLong);
  check_close(ri, {-2, 0, 3});
  CHECK(!ri.is_alias_of(i));
  CHECK(tensor({true, false}).nan_to_num().dtype() == kBool);
  // d/dx = 1 where x was finite, 0 where it was replaced.
  Tensor y = from_values({kNan, 2.0, kInf, -1.0}, {4}).requires_grad_(true);
  y.nan_to_num().sum().backward();
  check_close(y.grad(), {0, 1, 0, 1});
  check_grad([](const TensorList& in) { return in[0].nan_to_num(); }, {leaf_in({2, 3}, -2, 2)});
  check_grad([](const TensorList& in) { return in[0].nan_to_num(); }, {noncontiguous_leaf(-2, 2)});
}

TEST_CASE("test_unary: empty and 0-dim tensors") {
  Tensor e = zeros({0, 3}, kDouble);
  for (const FloatOp& op : float_ops()) {
    INFO("op: " << std::string(op.name));
    Tensor y = op.op(e);
    CHECK(shape(y) == std::vector<int64_t>{0, 3});
    CHECK(op.op(zeros({0}, kLong)).dtype() == kFloat);
    Tensor z = e.clone();
    op.inplace(z);
    CHECK(shape(z) == std::vector<int64_t>{0, 3});
  }
  for (Tensor y : {e.abs(), e.sign(), e.square(), e.neg(), e.floor(), e.ceil(), e.round(), e.round(2), e.trunc(),
                   e.frac(), e.logical_not(), e.nan_to_num()})
    CHECK(shape(y) == std::vector<int64_t>{0, 3});
  // Gradients of an empty input are empty.
  Tensor eg = zeros({0, 2}, kDouble).requires_grad_(true);
  eg.exp().sum().backward();
  CHECK(shape(eg.grad()) == std::vector<int64_t>{0, 2});

  Tensor s = from_values({0.25}, {});
  CHECK(s.dim() == 0);
  CHECK(s.sqrt().dim() == 0);
  check_close(s.sqrt(), {0.5});
  check_close(s.log2(), {-2.0});
  check_close(s.round(1), {0.2});  // 2.5 -> 2 (half to even)
  CHECK(tensor(3).abs().dim() == 0);
  CHECK(tensor(3).logical_not().dim() == 0);
}

TEST_CASE("test_unary: large and strided inputs (parallel and pointer-walk loops)") {
  // Above the parallel grain size, and transposed so the kernel takes its strided path.
  const int64_t n = 300, m = 250;
  Tensor x = (arange(n * m, kDouble) / double(n * m) * 8.0 - 4.0).view({n, m});
  std::vector<double> xs = values(x.t());
  check_close(x.t().sigmoid(), map(xs, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }), 1e-14, 1e-12);
  check_close(x.t().abs(), map(xs, [](double v) { return std::fabs(v); }), 0, 0);
  check_close(x.t().floor(), map(xs, [](double v) { return std::floor(v); }), 0, 0);
  check_close(x.t().to(kFloat).tanh(), as_float32(map(xs, [](double v) { return std::tanh(v); })), 1e-6, 2e-6);
  Tensor y = x.t().contiguous().t();  // in place on a transposed view of a large tensor
  y.exp_();
  check_close(y.t(), map(xs, [](double v) { return std::exp(v); }), 1e-14, 1e-12);
}
