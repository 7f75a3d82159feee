// Binary arithmetic: add/sub/mul/div (with rounding modes), remainder, fmod, pow, atan2,
// maximum, minimum. Values against std:: math and hand-worked cases, broadcasting, integer
// division rules, in-place forms, empty and 0-dim tensors, and gradients (gradcheck).
#include <cmath>
#include <limits>
#include <numbers>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::values;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kPi = std::numbers::pi;

/// Python's %: the result takes the sign of the divisor.
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/// Checks op(a, b) against ref applied to each pair of elements (a and b of one shape).
template <class Op, class Ref>
void check_against(const Tensor& a, const Tensor& b, Op op, Ref ref, double atol = 1e-12,
                   double rtol = 1e-12) {
  std::vector<double> va = values(a), vb = values(b), want;
  for (size_t i = 0; i < va.size(); ++i) want.push_back(ref(va[i], vb[i]));
  check_close(op(a, b), want, atol, rtol);
}

std::vector<int64_t> shape_of(const Tensor& t) { return t.sizes().vec(); }

}  // namespace

TEST_CASE("test_binary: values against std:: math") {
  // Signs, zeros and fractions on both sides; b has no zeros (division by zero is tested below).
  std::vector<double> av = {-7.5, -3, -1, -0.5, 0, 0.5, 2, 5.25, 7, 1e-3};
  std::vector<double> bv = {2, -2, 3, 0.75, -1.5, 4, -3, 2.5, 0.5, -7};
  for (ScalarType t : {kDouble, kFloat}) {
    INFO("dtype " << t);
    double tol = t == kDouble ? 1e-12 : 1e-6;
    Tensor a = from_values(av, {10}, t), b = from_values(bv, {10}, t);
    check_against(
        a, b, [](auto x, auto y) { return x + y; }, [](double x, double y) { return x + y; }, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return sub(x, y, 2); }, [](double x, double y) { return x - 2 * y; }, tol,
        tol);
    check_against(
        a, b, [](auto x, auto y) { return x * y; }, [](double x, double y) { return x * y; }, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return x / y; }, [](double x, double y) { return x / y; }, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return x % y; }, py_mod, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return fmod(x, y); }, [](double x, double y) { return std::fmod(x, y); },
        tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return div(x, y, "floor"); },
        [](double x, double y) { return std::floor(x / y); }, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return div(x, y, "trunc"); },
        [](double x, double y) { return std::trunc(x / y); }, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return floor_divide(x, y); },
        [](double x, double y) { return std::floor(x / y); }, tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return atan2(x, y); }, [](double x, double y) { return std::atan2(x, y); },
        tol, tol);
    check_against(
        a, b, [](auto x, auto y) { return maximum(x, y); },
        [](double x, double y) { return std::max(x, y); });
    check_against(
        a, b, [](auto x, auto y) { return minimum(x, y); },
        [](double x, double y) { return std::min(x, y); });
    // pow: negative bases with fractional exponents give NaN on both sides.
    check_against(
        a, b, [](auto x, auto y) { return pow(x, y); }, [](double x, double y) { return std::pow(x, y); },
        tol, tol);
    for (double e : {0.0, 0.5, 2.0, 3.0, -0.5, -1.0, -2.0, 1.7, -2.3}) {
      INFO("exponent " << e);
      check_against(
          a, b, [e](auto x, auto) { return pow(x, e); }, [e](double x, double) { return std::pow(x, e); },
          tol, tol);
      check_against(
          a, b, [e](auto, auto y) { return pow(e, y); }, [e](double, double y) { return std::pow(e, y); },
          tol, tol);
    }
  }
}

TEST_CASE("test_binary: hand-worked remainder, fmod and rounding division") {
  // remainder takes the divisor's sign, fmod the dividend's: 7 = 3*2 + 1, -7 = 3*(-3) + 2, ...
  Tensor a = tensor({7.0, -7.0, 7.0, -7.0}), b = tensor({3.0, 3.0, -3.0, -3.0});
  check_close(remainder(a, b), {1, 2, -2, -1});
  check_close(fmod(a, b), {1, -1, 1, -1});
  check_close(remainder(a, 3), {1, 2, 1, 2});
  check_close(fmod(a, -3), {1, -1, 1, -1});
  check_close(a.to(kLong) % b.to(kLong), {1, 2, -2, -1});
  check_close(fmod(a.to(kInt), b.to(kInt)), {1, -1, 1, -1});
  check_close(tensor({5.5}, kHalf) % 2, {1.5});
  check_close(tensor({200, 7}, kByte) % 3, {2, 1});
  // 7/2 = 3.5, -7/2 = -3.5: trunc -> 3, -3; floor -> 3, -4.
  Tensor i = tensor({7, -7, 7, -7}), d = tensor({2, 2, -2, -2});
  check_close(div(i, d, "trunc"), {3, -3, -3, 3});
  check_close(div(i, d, "floor"), {3, -4, -4, 3});
  CHECK(div(i, d, "floor").dtype() == kLong);
  check_close(div(i, 2, "floor"), {3, -4, 3, -4});
  check_close(div(i, 2.0, "floor"), {3, -4, 3, -4});
  CHECK(div(i, 2.0, "floor").dtype() == kFloat);
  check_close(floor_divide(i, d), {3, -4, -4, 3});
  check_close(i / d, {3.5, -3.5, -3.5, 3.5});
  check_close(true_divide(i, d), {3.5, -3.5, -3.5, 3.5});
  check_close(i.div(d, std::nullopt), {3.5, -3.5, -3.5, 3.5});
}

TEST_CASE("test_binary: integer division rules") {
  Tensor i = tensor({5, -3}), z = tensor({0, 1});
  check_error([&] { div(i, z, "trunc"); }, "ZeroDivisionError");
  check_error([&] { div(i, z, "floor"); }, "ZeroDivisionError");
  check_error([&] { floor_divide(i, z); }, "ZeroDivisionError");
  check_error([&] { remainder(i, z); }, "ZeroDivisionError");
  check_error([&] { fmod(i, z); }, "ZeroDivisionError");
  check_error([&] { remainder(i, 0); }, "ZeroDivisionError");
  check_error([&] { fmod(i.to(kShort), 0); }, "ZeroDivisionError");
  check_error([&] { i.clone().div_(z, "floor"); }, "ZeroDivisionError");
  check_error([&] { i.clone().remainder_(z); }, "ZeroDivisionError");
  // Large inputs take the parallel path; the error still surfaces once, as an ember::Error.
  Tensor big = ones({100000}, kLong);
  check_error([&] { remainder(big, zeros({100000}, kLong)); }, "ZeroDivisionError");
  // True division of integers is floating: -1/0 = -inf, 0/0 = nan.
  check_close(tensor({-1, 0}) / tensor({0, 0}), {-kInf, kNaN});
  // Floating rounding division by zero follows IEEE: 1/0 = inf; floor(0 / -2) = -0.
  Tensor f = tensor({7.0, -7.0, 0.0, -0.0, 1.0}), g = tensor({2.0, 2.0, -2.0, -2.0, 0.0});
  check_close(div(f, g, "floor"), {3, -4, 0, 0, kInf});
  check_close(div(f, g, "trunc"), {3, -3, 0, 0, kInf});
  CHECK(std::signbit(values(div(f, g, "floor"))[2]));
  CHECK(!std::signbit(values(div(f, g, "floor"))[3]));
  check_close(remainder(tensor({7.0}), tensor({0.0})), {kNaN});
  check_close(fmod(tensor({7.0}), tensor({0.0})), {kNaN});
  // The most negative integer divided by -1 overflows; it wraps (as int8 does in PyTorch).
  Tensor m = tensor({std::numeric_limits<int64_t>::min()});
  CHECK(div(m, -1, "floor").item<int64_t>() == std::numeric_limits<int64_t>::min());
  CHECK(div(m, -1, "trunc").item<int64_t>() == std::numeric_limits<int64_t>::min());
  CHECK(remainder(m, -1).item<int64_t>() == 0);
  CHECK(fmod(m, -1).item<int64_t>() == 0);
  check_close(div(tensor({-128}, kChar), -1, "floor"), {-128});
  // bool has no rounding division or remainder.
  Tensor b = tensor({true, false});
  check_error([&] { div(b, b, "trunc"); }, "\"div_trunc_cpu\" not implemented for 'Bool'");
  check_error([&] { div(b, b, "floor"); }, "\"div_floor_cpu\" not implemented for 'Bool'");
  check_error([&] { remainder(b, b); }, "\"remainder_cpu\" not implemented for 'Bool'");
  check_error([&] { fmod(b, b); }, "\"fmod_cpu\" not implemented for 'Bool'");
  check_error([&] { div(i, i, "round"); },
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
}

TEST_CASE("test_binary: pow") {
  // Integer powers with negative exponents: 1 -> 1, -1 -> -1 (odd), anything else -> 0.
  check_close(pow(tensor({1, -1, 2, 0}), tensor({-1, -1, -1, -2})), {1, -1, 0, 0});
  check_close(pow(tensor({-1, 3}), tensor({-2, 4})), {1, 81});
  // Overflow wraps: 3^5 = 243 = -13 in int8; 2^62 exact; 3^41 mod 2^64 (from PyTorch).
  check_close(pow(tensor({3}, kChar), 5), {-13});
  Tensor big = pow(tensor({2, 3}), tensor({62, 41}));
  CHECK(big[0].item<int64_t>() == 4611686018427387904LL);
  CHECK(big[1].item<int64_t>() == -420491770248316829LL);
  check_error([&] { pow(tensor({1, 2}), -1); }, "Integers to negative integer powers are not allowed.");
  check_error(
      [&] {
        pow(tensor({1, 2}, kByte), -1);
      },
      "Integers to negative integer powers are not allowed.");
  check_error([&] { tensor({1, 2}).pow_(-2); }, "Integers to negative integer powers are not allowed.");
  check_close(pow(tensor({1, 2}), 2.5), {1, std::pow(2.0, 2.5)});
  check_close(pow(tensor({1.0, 2.0}), -1), {1, 0.5});
  // Scalar bases: 2^-1 truncates to 0 for an integer exponent tensor; 2.5^[1, 2] is float.
  check_close(pow(2, tensor({-1, 2})), {0, 4});
  check_close(pow(2.5, tensor({1, 2}, kInt)), {2.5, 6.25});
  // The special exponents use sqrt/rsqrt as PyTorch does: (-0)^0.5 = -0, (-inf)^0.5 = nan.
  Tensor s = tensor({-0.0, -kInf, 4.0});
  check_close(pow(s, 0.5), {0, kNaN, 2});
  CHECK(std::signbit(values(pow(s, 0.5))[0]));
  check_close(pow(s, -0.5), {-kInf, kNaN, 0.5});
  // float16: computed in float, rounded once: 2^2.5 = 5.657 -> 5.65625.
  check_close(pow(tensor({1.0, 2.0}, kHalf), 2.5), {1, 5.65625});
  // bool: a bool result has no pow; a bool tensor with an int exponent computes in int64.
  Tensor b = tensor({true, false});
  check_error([&] { pow(b, b); }, "\"pow\" not implemented for 'Bool'");
  check_error([&] { pow(true, b); }, "\"pow\" not implemented for 'Bool'");
  check_close(pow(b, 2), {1, 0});
  check_close(pow(b, 0), {1, 1});
}

TEST_CASE("test_binary: atan2, maximum, minimum") {
  // atan2 quadrants: (1, 0) -> pi/2, (-1, 0) -> -pi/2, (0, -1) -> pi, (0, 0) -> 0.
  check_close(atan2(tensor({1.0, -1.0, 0.0, 0.0}), tensor({0.0, 0.0, -1.0, 0.0})),
              {kPi / 2, -kPi / 2, kPi, 0});
  Tensor ai = atan2(tensor({1, -1}), tensor({1, -1}));
  CHECK(ai.dtype() == kFloat);
  check_close(ai, {kPi / 4, -3 * kPi / 4});
  // NaN propagates from either side.
  Tensor n = tensor({kNaN, 1.0, 2.0}), o = tensor({1.0, kNaN, 1.0});
  check_close(maximum(n, o), {kNaN, kNaN, 2});
  check_close(minimum(n, o), {kNaN, kNaN, 1});
  Tensor b = tensor({true, false}), c = tensor({false, false});
  CHECK(maximum(b, c).dtype() == kBool);
  CHECK(values(maximum(b, c)) == std::vector<double>{1, 0});
  CHECK(values(minimum(b, tensor({true, true}))) == std::vector<double>{1, 0});
  check_close(maximum(tensor({5, -3}), tensor({1.5, -2.5})), {5, -2.5});
  check_close(tensor({5, -3}).minimum(tensor({1, 1})), {1, -3});
}

TEST_CASE("test_binary: broadcasting") {
  manual_seed(1);
  Tensor a = randn({2, 1, 3}, kDouble), b = randn({4, 1}, kDouble);
  Tensor s = a + b, p = pow(a * a + 1, b), r = remainder(a, b);
  CHECK(shape_of(s) == std::vector<int64_t>{2, 4, 3});
  CHECK(shape_of(p) == std::vector<int64_t>{2, 4, 3});
  std::vector<double> va = values(a), vb = values(b), ws, wp, wr;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) {
        double x = va[i * 3 + k], y = vb[j];
        ws.push_back(x + y);
        wp.push_back(std::pow(x * x + 1, y));
        wr.push_back(py_mod(x, y));
      }
  check_close(s, ws);
  check_close(p, wp);
  check_close(r, wr);
  const char* msg =
      "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1";
  Tensor x = zeros({2, 3}), y = zeros({2, 4});
  check_error([&] { x + y; }, msg);
  check_error([&] { remainder(x, y); }, msg);
  check_error([&] { pow(x, y); }, msg);
  check_error([&] { atan2(x, y); }, msg);
  check_error([&] { maximum(x, y); }, msg);
  check_error([&] { div(x, y, "floor"); }, msg);
}

TEST_CASE("test_binary: alpha") {
  Tensor i = tensor({1, 2}), f = tensor({1.0, 2.0});
  check_close(add(i, i, 3), {4, 8});
  check_close(sub(f, tensor({0.5, 0.5}), 2.5), {-0.25, 0.75});
  check_close(add(f, 1, 2), {3, 4});
  const char* msg = "For integral input tensors, argument alpha must not be a floating point number.";
  check_error([&] { add(i, i, 2.5); }, msg);
  check_error([&] { add(i, 1, 2.5); }, msg);
  check_error([&] { sub(i, i, 1.5); }, msg);
  check_error([&] { i.clone().add_(i, 0.5); }, msg);
  check_error([&] { add(f, f, true); }, "Boolean alpha only supported for Boolean results.");
  Tensor b = tensor({true, false});
  CHECK(values(add(b, b, true)) == std::vector<double>{1, 0});
  check_error([&] { b - b; }, "Subtraction, the `-` operator, with two bool tensors is not supported.");
  check_error([&] { b - true; }, "Subtraction, the `-` operator, with two bool tensors is not supported.");
  const char* one_bool = "Subtraction, the `-` operator, with a bool tensor is not supported.";
  check_error([&] { f - b; }, one_bool);
  check_error([&] { b - 1; }, one_bool);
  check_error([&] { 1 - b; }, one_bool);
  check_error([&] { i - true; }, one_bool);
  check_error([&] { rsub(f, b); }, one_bool);
  check_error([&] { f.clone().sub_(b); }, one_bool);
  // rsub(a, b, alpha) = b - alpha a.
  check_close(rsub(f, tensor({5.0, 5.0}), 2), {3, 1});
  check_close(rsub(f, 5, 2), {3, 1});
  check_close(rsub(i, 5), {4, 3});
  check_error([&] { rsub(i, 5, 0.5); }, msg);
}

TEST_CASE("test_binary: node names follow PyTorch") {
  Tensor x = tensor({1.0, 2.0}, requires_grad()), y = tensor({3.0, 4.0}, requires_grad());
  auto node = [](const Tensor& t) { return t.grad_fn()->name(); };
  CHECK(node(x - y) == "SubBackward0");
  CHECK(node(2.0 - x) == "RsubBackward1");
  CHECK(node(rsub(x, y)) == "RsubBackward0");
  CHECK(node(pow(x, 2)) == "PowBackward0");
  CHECK(node(pow(x, y)) == "PowBackward1");
  CHECK(node(pow(2.0, x)) == "PowBackward2");
  CHECK(node(x % y) == "RemainderBackward1");
  CHECK(node(x % 2) == "RemainderBackward0");
  CHECK(node(fmod(x, y)) == "FmodBackward1");
  CHECK(node(fmod(x, 2)) == "FmodBackward0");
  CHECK(node(div(x, y, "floor")) == "DivBackward2");
  CHECK(node(div(x, 2, "trunc")) == "DivBackward3");
  CHECK(node(atan2(x, y)) == "Atan2Backward0");
  CHECK(node(maximum(x, y)) == "MaximumBackward0");
  CHECK(node(minimum(x, y)) == "MinimumBackward0");
  // rsub's gradients: d/da (b - a) = -1, d/db = 1.
  rsub(x, y).sum().backward();
  check_close(x.grad(), {-1, -1});
  check_close(y.grad(), {1, 1});
}

TEST_CASE("test_binary: in-place forms") {
  Tensor x = tensor({7.0, -7.0});
  void* data = x.data_ptr();
  uint32_t v0 = x._version();
  x.remainder_(3);  // [1, 2]
  check_close(x, {1, 2});
  x.pow_(tensor({3.0, 2.0}));  // [1, 4]
  check_close(x, {1, 4});
  x.fmod_(tensor({1.0, 3.0}));  // [0, 1]
  check_close(x, {0, 1});
  x.pow_(2);
  x.atan2_(tensor({1.0, 1.0}));  // atan2(0, 1) = 0, atan2(1, 1) = pi/4
  check_close(x, {0, kPi / 4});
  x.fill_(-7).div_(tensor({2.0, -2.0}), "floor");  // [-4, 3]
  check_close(x, {-4, 3});
  x.div_(tensor({3.0, 2.0}), "trunc");  // [-1, 1]
  check_close(x, {-1, 1});
  x.fmod_(2).remainder_(tensor({-2.0, 2.0}));  // fmod: [-1, 1]; remainder: [-1, 1]
  check_close(x, {-1, 1});
  CHECK(x.data_ptr() == data);
  CHECK(x._version() > v0);
  Tensor l = tensor({9, -9});
  l.div_(tensor({2, 2}), "floor");
  check_close(l, {4, -5});
  l.pow_(2);
  check_close(l, {16, 25});
  // Broadcasting the operand into self is fine; broadcasting self is not.
  Tensor m = zeros({2, 3});
  m.add_(tensor({1.0, 2.0, 3.0})).pow_(tensor({2.0, 1.0, 1.0}));
  check_close(m, {1, 2, 3, 1, 2, 3});
  const char* msg = "output with shape [3] doesn't match the broadcast shape [2, 3]";
  Tensor s = zeros({3});
  check_error([&] { s.add_(zeros({2, 3})); }, msg);
  check_error([&] { s.remainder_(ones({2, 3})); }, msg);
  check_error([&] { s.fmod_(ones({2, 3})); }, msg);
  check_error([&] { s.pow_(ones({2, 3})); }, msg);
  check_error([&] { s.atan2_(ones({2, 3})); }, msg);
  check_error([&] { s.div_(ones({2, 3}), "floor"); }, msg);
  // A non-contiguous self is written through its strides.
  Tensor base = zeros({2, 3});
  Tensor t = base.t();
  t.add_(tensor({1.0, 2.0})).pow_(2);
  check_close(base, {1, 1, 1, 4, 4, 4});
}

TEST_CASE("test_binary: in-place forms record gradients") {
  Tensor x = tensor({0.5, 2.0}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor y = x * 1;
  y.pow_(3);  // d/dx x^3 = 3x^2
  y.sum().backward();
  check_close(x.grad(), {0.75, 12});
  x.mutable_grad().reset();
  Tensor z = x * 1;
  z.remainder_(tensor({0.3, 0.7}, kDouble));  // d/dx = 1
  z.atan2_(ones({2}, kDouble));               // d/dz atan2(z, 1) = 1 / (1 + z^2); z = [0.2, 0.6]
  z.sum().backward();
  check_close(x.grad(), {1 / 1.04, 1 / 1.36});
}

TEST_CASE("test_binary: empty and 0-dim tensors") {
  Tensor e = zeros({0, 3});
  CHECK(shape_of(e + zeros({3})) == std::vector<int64_t>{0, 3});
  CHECK(shape_of(e * zeros({2, 1, 3})) == std::vector<int64_t>{2, 0, 3});
  CHECK(shape_of(pow(e, 2)) == std::vector<int64_t>{0, 3});
  CHECK(shape_of(atan2(e, e)) == std::vector<int64_t>{0, 3});
  CHECK(shape_of(maximum(e, ones({1}))) == std::vector<int64_t>{0, 3});
  // No elements, so no division by zero.
  Tensor ei = zeros({0}, kLong);
  CHECK(remainder(ei, ei).numel() == 0);
  CHECK(div(ei, ei, "floor").numel() == 0);
  Tensor eg = zeros({0, 3}, TensorOptions().dtype(kDouble).requires_grad(true));
  pow(eg, 2).sum().backward();
  CHECK(shape_of(eg.grad()) == std::vector<int64_t>{0, 3});
  // 0-dim operands.
  Tensor p = pow(tensor(3.0), tensor(2.0));
  CHECK(p.dim() == 0);
  check_close(p, {9});
  Tensor r = remainder(tensor(-7), 3);
  CHECK(r.dim() == 0);
  CHECK(r.item<int64_t>() == 2);
  check_close(maximum(tensor(1.0), tensor({0.0, 2.0})), {1, 2});
}

TEST_CASE("test_binary: gradcheck") {
  manual_seed(7);
  Tensor a = rand_leaf({2, 3}), b = rand_leaf({2, 3}, 0.5, 1.5), pos = rand_leaf({2, 3}, 0.5, 1.5);
  Tensor row = rand_leaf({3}, 0.5, 1.5), col = rand_leaf({2, 1}, 0.5, 1.5);
  using F = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<const char*, F>> ops = {
      {"add", [](const Tensor& x, const Tensor& y) { return add(x, y, 2.5); }},
      {"sub", [](const Tensor& x, const Tensor& y) { return sub(x, y, -1.5); }},
      {"mul", [](const Tensor& x, const Tensor& y) { return x * y; }},
      {"div", [](const Tensor& x, const Tensor& y) { return x / y; }},
      {"remainder", [](const Tensor& x, const Tensor& y) { return remainder(x, y); }},
      {"fmod", [](const Tensor& x, const Tensor& y) { return fmod(x, y); }},
      {"atan2", [](const Tensor& x, const Tensor& y) { return atan2(x, y); }},
      {"maximum", [](const Tensor& x, const Tensor& y) { return maximum(x, y); }},
      {"minimum", [](const Tensor& x, const Tensor& y) { return minimum(x, y); }},
      {"pow", [](const Tensor& x, const Tensor& y) { return pow(x * x + 0.5, y - 1); }},
  };
  for (const auto& [name, f] : ops) {
    INFO("op " << name);
    auto fn = [&f](const TensorList& in) { return f(in[0], in[1]); };
    check_grad(fn, {a, b});
    check_grad(fn, {a, row});  // b broadcast over rows
    check_grad(fn, {col, a});  // a broadcast over columns
    // A non-contiguous operand: the transpose of a 3x2 leaf.
    Tensor tl = rand_leaf({3, 2}, 0.5, 1.5);
    check_grad([&f](const TensorList& in) { return f(in[0].t(), in[1]); }, {tl, b});
  }
  // Scalar exponents and scalar bases.
  for (double e : {2.0, 3.0, 0.5, -1.5, 2.7}) {
    INFO("exponent " << e);
    check_grad([e](const TensorList& in) { return pow(in[0], e); }, {pos});
    check_grad([e](const TensorList& in) { return pow(std::fabs(e) + 0.5, in[0]); }, {a});
  }
  check_grad([](const TensorList& in) { return pow(in[0], 2); }, {a});  // integral exponent
  check_grad([](const TensorList& in) { return div(in[0], 3.0); }, {a});
  check_grad([](const TensorList& in) { return 2.0 / in[0]; }, {pos});
  check_grad([](const TensorList& in) { return 2.0 - in[0]; }, {a});
  check_grad([](const TensorList& in) { return in[0] % 0.3; }, {a});
}

TEST_CASE("test_binary: gradgradcheck") {
  manual_seed(8);
  Tensor a = rand_leaf({2, 3}), b = rand_leaf({3}, 0.5, 1.5), pos = rand_leaf({2, 3}, 0.5, 1.5);
  check_gradgrad([](const TensorList& in) { return in[0] * in[1]; }, {a, b});
  check_gradgrad([](const TensorList& in) { return in[0] / in[1]; }, {a, b});
  check_gradgrad([](const TensorList& in) { return pow(in[0], in[1]); }, {pos, b});
  check_gradgrad([](const TensorList& in) { return pow(in[0], 2.5); }, {pos});
  check_gradgrad([](const TensorList& in) { return pow(1.7, in[0]); }, {a});
  check_gradgrad([](const TensorList& in) { return atan2(in[0], in[1]); }, {a, b});
}

TEST_CASE("test_binary: gradient conventions") {
  auto leaf = [](std::vector<double> v) {
    return from_values(v, {static_cast<int64_t>(v.size())}).requires_grad_(true);
  };
  // pow at x = 0 (PyTorch's values): d/dx = e x^(e-1) but 0 where e == 0; d/de = x^e log x
  // but 0 where x == 0 and e >= 0. x = [0, 0, 0, 2], e = [0, 1, -1, 2].
  Tensor x = leaf({0, 0, 0, 2}), e = leaf({0, 1, -1, 2});
  Tensor y = pow(x, e);
  check_close(y, {1, 0, kInf, 4});
  CHECK(y.grad_fn()->name() == "PowBackward1");
  y.sum().backward();
  check_close(x.grad(), {0, 1, -kInf, 4});
  check_close(e.grad(), {0, 0, -kInf, 4 * std::log(2.0)});
  Tensor e2 = leaf({0, 1, -1, 2});
  pow(0.0, e2).sum().backward();  // 0^e: gradient 0 for e >= 0, inf * log 0 = -inf for e < 0
  check_close(e2.grad(), {0, 0, -kInf, 0});
  Tensor x2 = leaf({0, 2, -1});
  pow(x2, 0).sum().backward();  // x^0 is constant
  check_close(x2.grad(), {0, 0, 0});
  Tensor x3 = leaf({0, 2, -1});
  pow(x3, 0.5).sum().backward();  // 0.5 x^-0.5: inf at 0, nan for negative x
  check_close(x3.grad(), {kInf, 0.5 / std::sqrt(2.0), kNaN});

  // maximum/minimum split ties equally: a = [1, 2, 3], c = [1, 3, 2].
  Tensor a = leaf({1, 2, 3}), c = leaf({1, 3, 2});
  maximum(a, c).sum().backward();
  check_close(a.grad(), {0.5, 0, 1});
  check_close(c.grad(), {0.5, 1, 0});
  Tensor a2 = leaf({1, 2, 3}), c2 = leaf({1, 3, 2});
  minimum(a2, c2).sum().backward();
  check_close(a2.grad(), {0.5, 1, 0});
  check_close(c2.grad(), {0.5, 0, 1});

  // remainder: d/db = -floor(a/b); fmod: -trunc(a/b). a = [5, -7], b = [3, 2].
  Tensor p = leaf({5, -7}), q = leaf({3, 2});
  remainder(p, q).sum().backward();
  check_close(p.grad(), {1, 1});
  check_close(q.grad(), {-1, 4});
  Tensor p2 = leaf({5, -7}), q2 = leaf({3, 2});
  fmod(p2, q2).sum().backward();
  check_close(q2.grad(), {-1, 3});

  // Rounding division is piecewise constant: zero gradients.
  Tensor n = leaf({5, -7}), d = leaf({3, 2});
  div(n, d, "floor").sum().backward();
  check_close(n.grad(), {0, 0});
  check_close(d.grad(), {0, 0});
  // atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2); at (1, 2): 2/5 and -1/5.
  Tensor u = leaf({1}), w = leaf({2});
  atan2(u, w).backward();
  check_close(u.grad(), {0.4});
  check_close(w.grad(), {-0.2});
}
