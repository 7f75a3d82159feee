// Unary elementwise math ops: neg, abs, exp/log families, roots, trig, rounding, logical_not,
// nan_to_num and the isnan predicates. Each op is one struct: its formula (the functor
// <Op>Fn of core/ops/unary_math.h, which the CPU loop and the CUDA kernel both run) and its
// backward, which reuses the saved output where the derivative is a function of it.
// Activations and clamp live in activation.cpp; shared helpers in unary_internal.h.
#include "ember/core/ops/unary.h"

#include <cmath>
#include <limits>

#include "ember/core/autocast.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/unary_internal.h"
#include "ember/core/ops/unary_math.h"

namespace ember {

using namespace unary_impl;

namespace unary_impl {

// where(mask, t, 0): d/dt is the same mask (the mask is a constant of the forward input).
struct Masked final : UnaryOp {
  Tensor mask;  // bool, broadcastable to t
  explicit Masked(Tensor m) : mask(std::move(m)) {}
  const char* name() const override { return "where"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& t, Tensor& out) const override {
    visit_float_dtype(out.dtype(), name(), [&]<typename T>() {
      // The bool mask is read as uint8_t (same bytes, 0 or 1): GCC does not vectorize loads
      // of bool, and the scalar loop branches on a random mask (relu's backward ran 5x slower).
      cpu::binary_kernel<T, T, uint8_t>(t, mask, out, [](T v, uint8_t m) { return m ? v : static_cast<T>(0.0f); });
    });
  }
  void cuda(const Tensor& t, Tensor& out) const override {
    check_domain<MapDomain::kFloating>(out.dtype(), name());
    cuda::masked(t, mask, out);
  }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override { return masked(grad, mask); }
};

Tensor masked(const Tensor& t, const Tensor& mask) { return same_dtype_unary(t, Masked{mask}); }

// The test is picked once per call (visit_test_kind), outside the loop; only `negate` is read
// per element, as an xor the compiler vectorizes.
Tensor const_mask(const Tensor& x, const ValueTest& test) {
  Tensor out = empty(x.sizes(), TensorOptions().dtype(kBool).device(x.device()));
  check_domain<MapDomain::kFloating>(x.dtype(), "mask");
  if (x.is_cuda()) {
    cuda::value_test(test, x, out);
    return out;
  }
  visit_float_dtype(x.dtype(), "mask", [&]<typename T>() {
    using M = opmath_t<T>;
    const M a = static_cast<M>(test.a), b = static_cast<M>(test.b);
    const bool negate = test.negate;
    visit_test_kind(test.kind, [&]<TestKind K>() {
      cpu::unary_kernel<bool, T>(x, out, [=](T v) { return passes<K>(static_cast<M>(v), a, b) != negate; });
    });
  });
  return out;
}

Tensor const_select(const Tensor& x, const ValueTest& test, double if_true, double if_false) {
  Tensor out = empty(x.sizes(), x.options());
  check_domain<MapDomain::kFloating>(x.dtype(), "const_select");
  if (x.is_cuda()) {
    cuda::value_select(test, if_true, if_false, x, out);
    return out;
  }
  visit_float_dtype(x.dtype(), "const_select", [&]<typename T>() {
    using M = opmath_t<T>;
    const M a = static_cast<M>(test.a), b = static_cast<M>(test.b);
    const T yes = static_cast<T>(static_cast<M>(if_true)), no = static_cast<T>(static_cast<M>(if_false));
    const bool negate = test.negate;
    visit_test_kind(test.kind, [&]<TestKind K>() {
      cpu::unary_kernel<T, T>(x, out, [=](T v) { return passes<K>(static_cast<M>(v), a, b) != negate ? yes : no; });
    });
  });
  return out;
}

}  // namespace unary_impl

namespace {

constexpr double kLn2 = 0.693147180559945309417;
constexpr double kLn10 = 2.302585092994045684018;
constexpr double kTwoOverSqrtPi = 1.128379167095512573896;  // d/dx erf(x) = 2/sqrt(pi) e^{-x^2}

// ---- sign-like ----------------------------------------------------------------------------

constexpr const char* kNegBoolMessage =
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
    "the `~` or `logical_not()` operator instead.";

// neg: d/dx (-x) = -1.
struct Neg final : UnaryOp {
  const char* name() const override { return "neg"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    EMBER_CHECK(out.dtype() != kBool, kNegBoolMessage);
    unary_map(name(), x, out, NegFn{});
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    EMBER_CHECK(out.dtype() != kBool, kNegBoolMessage);
    cuda::unary_map(x, out, NegFn{});
  }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override { return -grad; }
};

// abs: d/dx |x| = sign(x), 0 at 0 (PyTorch's convention).
struct Abs final : MapOp<Abs, AbsFn> {
  const char* name() const override { return "abs"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * s.input(0).sign(); }
};

// sign: -1, 0 or 1 (0 for nan, as PyTorch); bool is its own sign. Piecewise constant: grad 0.
struct Sign final : MapOp<Sign, SignFn> {
  const char* name() const override { return "sign"; }
  Save saves() const override { return Save::kNothing; }
  Tensor backward(const SavedTensors&, const Tensor& g) const override { return zeros_like(g); }
};

// square (PyTorch records it as pow(x, 2)): d/dx x^2 = 2x.
struct Square final : MapOp<Square, SquareFn> {
  const char* name() const override { return "pow"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * (s.input(0) * 2); }
};

// ---- exponentials and logarithms -------------------------------------------------------------

// exp: d/dx e^x = e^x, so backward reuses the saved output.
struct Exp final : MapOp<Exp, ExpFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "exp"; }
  Save saves() const override { return Save::kOutputs; }
  cpu::vec::f8 vf(cpu::vec::f8 v) const { return cpu::vec::exp(v); }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * s.output(); }
};

// exp2: d/dx 2^x = 2^x ln 2.
struct Exp2 final : MapOp<Exp2, Exp2Fn> {
  const char* name() const override { return "exp2"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * (s.output() * kLn2); }
};

// expm1: d/dx (e^x - 1) = e^x = result + 1.
struct Expm1 final : MapOp<Expm1, Expm1Fn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "expm1"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * (s.output() + 1); }
};

// log: d/dx ln x = 1/x.
struct Log final : MapOp<Log, LogFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "log"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g / s.input(0); }
};

// log2: d/dx log2 x = 1/(x ln 2).
struct Log2 final : MapOp<Log2, Log2Fn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "log2"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g / (s.input(0) * kLn2); }
};

// log10: d/dx log10 x = 1/(x ln 10).
struct Log10 final : MapOp<Log10, Log10Fn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "log10"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g / (s.input(0) * kLn10); }
};

// log1p: d/dx ln(1 + x) = 1/(1 + x).
struct Log1p final : MapOp<Log1p, Log1pFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "log1p"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g / (s.input(0) + 1); }
};

// ---- roots and reciprocals ----------------------------------------------------------------------

// sqrt: d/dx sqrt(x) = 1/(2 sqrt(x)) = 1/(2 result).
struct Sqrt final : MapOp<Sqrt, SqrtFn> {
  const char* name() const override { return "sqrt"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g / (s.output() * 2); }
};

// rsqrt: d/dx x^{-1/2} = -1/2 x^{-3/2} = -1/2 result^3.
struct Rsqrt final : MapOp<Rsqrt, RsqrtFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "rsqrt"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor r = s.output();
    return g * (r * r * r * -0.5);
  }
};

// reciprocal: d/dx 1/x = -1/x^2 = -result^2.
struct Reciprocal final : MapOp<Reciprocal, ReciprocalFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "reciprocal"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor r = s.output();
    return g * (r * r).neg();
  }
};

// ---- trigonometric, hyperbolic, sigmoid, erf -------------------------------------------------

// sin: d/dx sin x = cos x.
struct Sin final : MapOp<Sin, SinFn> {
  const char* name() const override { return "sin"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * s.input(0).cos(); }
};

// cos: d/dx cos x = -sin x.
struct Cos final : MapOp<Cos, CosFn> {
  const char* name() const override { return "cos"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * s.input(0).sin().neg(); }
};

// tan: d/dx tan x = 1 + tan^2 x = 1 + result^2.
struct Tan final : MapOp<Tan, TanFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "tan"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor r = s.output();
    return g * (r * r + 1);
  }
};

// asin: d/dx asin x = 1/sqrt(1 - x^2).
struct Asin final : MapOp<Asin, AsinFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "asin"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g / (1 - x * x).sqrt();
  }
};

// acos: d/dx acos x = -1/sqrt(1 - x^2).
struct Acos final : MapOp<Acos, AcosFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "acos"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g.neg() / (1 - x * x).sqrt();
  }
};

// atan: d/dx atan x = 1/(1 + x^2).
struct Atan final : MapOp<Atan, AtanFn> {
  const char* name() const override { return "atan"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g / (x * x + 1);
  }
};

// sinh: d/dx sinh x = cosh x.
struct Sinh final : MapOp<Sinh, SinhFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "sinh"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * s.input(0).cosh(); }
};

// cosh: d/dx cosh x = sinh x.
struct Cosh final : MapOp<Cosh, CoshFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  const char* name() const override { return "cosh"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return g * s.input(0).sinh(); }
};

// tanh: d/dx tanh x = 1 - tanh^2 x = 1 - result^2.
struct Tanh final : MapOp<Tanh, TanhFn> {
  const char* name() const override { return "tanh"; }
  Save saves() const override { return Save::kOutputs; }
  cpu::vec::f8 vf(cpu::vec::f8 v) const { return cpu::vec::tanh(v); }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor r = s.output();
    return g * (1 - r * r);
  }
};

// asinh: d/dx asinh x = 1/sqrt(x^2 + 1).
struct Asinh final : MapOp<Asinh, AsinhFn> {
  const char* name() const override { return "asinh"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g * (x * x + 1).rsqrt();
  }
};

// acosh: d/dx acosh x = 1/sqrt(x^2 - 1).
struct Acosh final : MapOp<Acosh, AcoshFn> {
  const char* name() const override { return "acosh"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g * (x * x - 1).rsqrt();
  }
};

// atanh: d/dx atanh x = 1/(1 - x^2).
struct Atanh final : MapOp<Atanh, AtanhFn> {
  const char* name() const override { return "atanh"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g / (1 - x * x);
  }
};

// sigmoid: 1/(1 + e^{-x}); d/dx = s(1 - s) with s the saved result.
struct Sigmoid final : MapOp<Sigmoid, SigmoidFn> {
  const char* name() const override { return "sigmoid"; }
  Save saves() const override { return Save::kOutputs; }
  cpu::vec::f8 vf(cpu::vec::f8 v) const { return cpu::vec::sigmoid(v); }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor r = s.output();
    return g * (r * (1 - r));
  }
};

// erf: d/dx erf x = 2/sqrt(pi) e^{-x^2}.
struct Erf final : MapOp<Erf, ErfFn> {
  const char* name() const override { return "erf"; }
  cpu::vec::f8 vf(cpu::vec::f8 v) const { return cpu::vec::erf(v); }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g * ((x * x).neg().exp() * kTwoOverSqrtPi);
  }
};

// erfc: d/dx (1 - erf x) = -2/sqrt(pi) e^{-x^2}.
struct Erfc final : MapOp<Erfc, ErfcFn> {
  const char* name() const override { return "erfc"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    return g * ((x * x).neg().exp() * -kTwoOverSqrtPi);
  }
};

// ---- rounding ------------------------------------------------------------------------------------

/// floor, ceil, round, trunc: integers are already whole (identity); piecewise constant, so
/// the gradient is zero everywhere (PyTorch's convention at the jumps too).
template <class D, class Fn>
struct Rounding : MapOp<D, Fn> {
  Save saves() const override { return Save::kNothing; }
  Tensor backward(const SavedTensors&, const Tensor& g) const override { return zeros_like(g); }
};

struct Floor final : Rounding<Floor, FloorFn> {
  const char* name() const override { return "floor"; }
};
struct Ceil final : Rounding<Ceil, CeilFn> {
  const char* name() const override { return "ceil"; }
};
// round: halves go to the even neighbour (nearbyint in the default rounding mode), as PyTorch.
struct Round final : Rounding<Round, RoundFn> {
  const char* name() const override { return "round"; }
};
struct Trunc final : Rounding<Trunc, TruncFn> {
  const char* name() const override { return "trunc"; }
};

// round(x, decimals): PyTorch scales by 10^|decimals|, rounds half to even, and scales back
// (dividing for negative decimals). Floating dtypes only. Gradient zero.
struct RoundDecimals final : MapOp<RoundDecimals, RoundDecimalsFn> {
  bool negative;
  double ten_pow;
  explicit RoundDecimals(int64_t decimals)
      : negative(decimals < 0), ten_pow(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals))) {}
  const char* name() const override { return "round"; }
  Save saves() const override { return Save::kNothing; }
  RoundDecimalsFn fn() const { return {ten_pow, negative}; }
  Tensor backward(const SavedTensors&, const Tensor& g) const override { return zeros_like(g); }
};

// frac: x - trunc(x); d/dx = 1.
struct Frac final : MapOp<Frac, FracFn> {
  const char* name() const override { return "frac"; }
  Save saves() const override { return Save::kNothing; }
  Tensor backward(const SavedTensors&, const Tensor& g) const override { return g; }
};

// ---- logical_not, nan_to_num, predicates ---------------------------------------------------------

// logical_not: x == 0. Out of place it gives bool; in place it writes 0/1 in self's dtype.
// Its output is not differentiable.
struct LogicalNot final : UnaryOp {
  const char* name() const override { return "logical_not"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_dtype(x.dtype(), [&]<typename T>() {
      auto is_zero = [](T v) { return IsZeroFn{}(static_cast<opmath_t<T>>(v)); };
      if (out.dtype() == kBool) cpu::unary_kernel<bool, T>(x, out, is_zero);
      else cpu::unary_kernel<T, T>(x, out, [is_zero](T v) { return static_cast<T>(is_zero(v) ? 1 : 0); });
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override { cuda::logical_not(x, out); }
  Tensor backward(const SavedTensors&, const Tensor& g) const override { return zeros_like(g); }
};

// nan_to_num: nan -> `nan` (0), +inf -> `posinf` (the dtype's max), -inf -> `neginf` (its
// lowest). d/dx = 1 where x is finite, 0 where it was replaced.
struct NanToNum final : UnaryOp {
  std::optional<double> nan, posinf, neginf;
  NanToNum(std::optional<double> n, std::optional<double> p, std::optional<double> m)
      : nan(n), posinf(p), neginf(m) {}
  const char* name() const override { return "nan_to_num"; }
  bool elementwise() const override { return true; }
  /// The formula for output dtype t, with the replacements already rounded to t, so that both
  /// devices store them back exactly.
  NanToNumFn fn(ScalarType t) const {
    return visit_float_dtype(t, name(), [&]<typename T>() {
      T nan_v = static_cast<T>(nan.value_or(0.0));
      T pos_v = posinf ? static_cast<T>(*posinf) : std::numeric_limits<T>::max();
      T neg_v = neginf ? static_cast<T>(*neginf) : std::numeric_limits<T>::lowest();
      auto exact = [](T v) { return static_cast<double>(static_cast<opmath_t<T>>(v)); };
      return NanToNumFn{exact(nan_v), exact(pos_v), exact(neg_v)};
    });
  }
  void cpu(const Tensor& x, Tensor& out) const override { unary_map(name(), x, out, fn(out.dtype())); }
  void cuda(const Tensor& x, Tensor& out) const override { cuda::unary_map(x, out, fn(out.dtype())); }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return masked(g, const_mask(s.input(0), {TestKind::kIsFinite}));
  }
};

/// A test of floating values producing bool (isnan, isinf, isfinite): no gradient. Integers
/// and bools are never nan or inf.
Tensor float_predicate(const Tensor& x, bool integer_result, TestKind kind) {
  if (!x.is_floating_point())
    return empty(x.sizes(), TensorOptions().dtype(kBool).device(x.device())).fill_(integer_result);
  return const_mask(x, {kind});
}

}  // namespace

Tensor isnan(const Tensor& x) { return float_predicate(x, false, TestKind::kIsNan); }
Tensor isinf(const Tensor& x) { return float_predicate(x, false, TestKind::kIsInf); }
Tensor isfinite(const Tensor& x) { return float_predicate(x, true, TestKind::kIsFinite); }
Tensor Tensor::isnan() const { return ember::isnan(*this); }
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }

// ---- sign-like ----------------------------------------------------------------------------------

Tensor neg(const Tensor& x) {
  EMBER_CHECK(x.dtype() != kBool, kNegBoolMessage);
  return same_dtype_unary<Neg>(x);
}
Tensor negative(const Tensor& x) { return neg(x); }
Tensor Tensor::neg() const { return ember::neg(*this); }
Tensor& Tensor::neg_() { return run_inplace_op(Neg{}, *this, {*this}); }

Tensor abs(const Tensor& x) { return same_dtype_unary<Abs>(x); }
Tensor Tensor::abs() const { return ember::abs(*this); }
Tensor& Tensor::abs_() { return run_inplace_op(Abs{}, *this, {*this}); }

Tensor sign(const Tensor& x) { return same_dtype_unary<Sign>(x); }
Tensor Tensor::sign() const { return ember::sign(*this); }
Tensor& Tensor::sign_() { return run_inplace_op(Sign{}, *this, {*this}); }

// square is pow(x, 2): a bool base is promoted to long, like bool ** int.
Tensor square(const Tensor& x) {
  ScalarType t = x.dtype() == kBool ? kLong : x.dtype();
  return run_op(Square{}, {x.to(t)}, OutSpec{DimVector(x.sizes()), t});
}
Tensor Tensor::square() const { return ember::square(*this); }
Tensor& Tensor::square_() {
  check_can_cast(dtype() == kBool ? kLong : dtype(), dtype());
  return run_inplace_op(Square{}, *this, {*this});
}

// ---- float-producing ops ----------------------------------------------------------------------

namespace {
/// float_unary behind the autocast entry, for the ops on an autocast list (CUDA's float32
/// list: exp, log, rsqrt, ...); `self` is the public function, called again with the cast input.
template <class OpT>
Tensor autocast_float_unary(Tensor (*self)(const Tensor&), const Tensor& x) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(OpT::kAutocast, self, x);
  return float_unary<OpT>(x);
}
}  // namespace


Tensor exp(const Tensor& x) { return autocast_float_unary<Exp>(&exp, x); }
Tensor Tensor::exp() const { return ember::exp(*this); }
Tensor& Tensor::exp_() { return float_unary_<Exp>(*this); }
Tensor exp2(const Tensor& x) { return float_unary<Exp2>(x); }
Tensor Tensor::exp2() const { return ember::exp2(*this); }
Tensor& Tensor::exp2_() { return float_unary_<Exp2>(*this); }
Tensor expm1(const Tensor& x) { return autocast_float_unary<Expm1>(&expm1, x); }
Tensor Tensor::expm1() const { return ember::expm1(*this); }
Tensor& Tensor::expm1_() { return float_unary_<Expm1>(*this); }
Tensor log(const Tensor& x) { return autocast_float_unary<Log>(&log, x); }
Tensor Tensor::log() const { return ember::log(*this); }
Tensor& Tensor::log_() { return float_unary_<Log>(*this); }
Tensor log2(const Tensor& x) { return autocast_float_unary<Log2>(&log2, x); }
Tensor Tensor::log2() const { return ember::log2(*this); }
Tensor& Tensor::log2_() { return float_unary_<Log2>(*this); }
Tensor log10(const Tensor& x) { return autocast_float_unary<Log10>(&log10, x); }
Tensor Tensor::log10() const { return ember::log10(*this); }
Tensor& Tensor::log10_() { return float_unary_<Log10>(*this); }
Tensor log1p(const Tensor& x) { return autocast_float_unary<Log1p>(&log1p, x); }
Tensor Tensor::log1p() const { return ember::log1p(*this); }
Tensor& Tensor::log1p_() { return float_unary_<Log1p>(*this); }

Tensor sqrt(const Tensor& x) { return float_unary<Sqrt>(x); }
Tensor Tensor::sqrt() const { return ember::sqrt(*this); }
Tensor& Tensor::sqrt_() { return float_unary_<Sqrt>(*this); }
Tensor rsqrt(const Tensor& x) { return autocast_float_unary<Rsqrt>(&rsqrt, x); }
Tensor Tensor::rsqrt() const { return ember::rsqrt(*this); }
Tensor& Tensor::rsqrt_() { return float_unary_<Rsqrt>(*this); }
Tensor reciprocal(const Tensor& x) { return autocast_float_unary<Reciprocal>(&reciprocal, x); }
Tensor Tensor::reciprocal() const { return ember::reciprocal(*this); }
Tensor& Tensor::reciprocal_() { return float_unary_<Reciprocal>(*this); }

Tensor sin(const Tensor& x) { return float_unary<Sin>(x); }
Tensor Tensor::sin() const { return ember::sin(*this); }
Tensor& Tensor::sin_() { return float_unary_<Sin>(*this); }
Tensor cos(const Tensor& x) { return float_unary<Cos>(x); }
Tensor Tensor::cos() const { return ember::cos(*this); }
Tensor& Tensor::cos_() { return float_unary_<Cos>(*this); }
Tensor tan(const Tensor& x) { return autocast_float_unary<Tan>(&tan, x); }
Tensor Tensor::tan() const { return ember::tan(*this); }
Tensor& Tensor::tan_() { return float_unary_<Tan>(*this); }
Tensor asin(const Tensor& x) { return autocast_float_unary<Asin>(&asin, x); }
Tensor Tensor::asin() const { return ember::asin(*this); }
Tensor& Tensor::asin_() { return float_unary_<Asin>(*this); }
Tensor acos(const Tensor& x) { return autocast_float_unary<Acos>(&acos, x); }
Tensor Tensor::acos() const { return ember::acos(*this); }
Tensor& Tensor::acos_() { return float_unary_<Acos>(*this); }
Tensor atan(const Tensor& x) { return float_unary<Atan>(x); }
Tensor asinh(const Tensor& x) { return float_unary<Asinh>(x); }
Tensor acosh(const Tensor& x) { return float_unary<Acosh>(x); }
Tensor atanh(const Tensor& x) { return float_unary<Atanh>(x); }
Tensor& asinh_(Tensor& x) { return float_unary_<Asinh>(x); }
Tensor& acosh_(Tensor& x) { return float_unary_<Acosh>(x); }
Tensor& atanh_(Tensor& x) { return float_unary_<Atanh>(x); }
Tensor Tensor::atan() const { return ember::atan(*this); }
Tensor& Tensor::atan_() { return float_unary_<Atan>(*this); }
Tensor sinh(const Tensor& x) { return autocast_float_unary<Sinh>(&sinh, x); }
Tensor Tensor::sinh() const { return ember::sinh(*this); }
Tensor& Tensor::sinh_() { return float_unary_<Sinh>(*this); }
Tensor cosh(const Tensor& x) { return autocast_float_unary<Cosh>(&cosh, x); }
Tensor Tensor::cosh() const { return ember::cosh(*this); }
Tensor& Tensor::cosh_() { return float_unary_<Cosh>(*this); }
Tensor tanh(const Tensor& x) { return float_unary<Tanh>(x); }
Tensor Tensor::tanh() const { return ember::tanh(*this); }
Tensor& Tensor::tanh_() { return float_unary_<Tanh>(*this); }
Tensor sigmoid(const Tensor& x) { return float_unary<Sigmoid>(x); }
Tensor Tensor::sigmoid() const { return ember::sigmoid(*this); }
Tensor& Tensor::sigmoid_() { return float_unary_<Sigmoid>(*this); }
Tensor erf(const Tensor& x) { return float_unary<Erf>(x); }
Tensor Tensor::erf() const { return ember::erf(*this); }
Tensor& Tensor::erf_() { return float_unary_<Erf>(*this); }
Tensor erfc(const Tensor& x) { return float_unary<Erfc>(x); }
Tensor Tensor::erfc() const { return ember::erfc(*this); }
Tensor& Tensor::erfc_() { return float_unary_<Erfc>(*this); }

// ---- rounding -----------------------------------------------------------------------------------

Tensor floor(const Tensor& x) { return same_dtype_unary<Floor>(x); }
Tensor Tensor::floor() const { return ember::floor(*this); }
Tensor& Tensor::floor_() { return run_inplace_op(Floor{}, *this, {*this}); }
Tensor ceil(const Tensor& x) { return same_dtype_unary<Ceil>(x); }
Tensor Tensor::ceil() const { return ember::ceil(*this); }
Tensor& Tensor::ceil_() { return run_inplace_op(Ceil{}, *this, {*this}); }
Tensor round(const Tensor& x) { return same_dtype_unary<Round>(x); }
Tensor round(const Tensor& x, int64_t decimals) { return same_dtype_unary(x, RoundDecimals{decimals}); }
Tensor Tensor::round() const { return ember::round(*this); }
Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor& Tensor::round_() { return run_inplace_op(Round{}, *this, {*this}); }
Tensor trunc(const Tensor& x) { return same_dtype_unary<Trunc>(x); }
Tensor Tensor::trunc() const { return ember::trunc(*this); }
Tensor& Tensor::trunc_() { return run_inplace_op(Trunc{}, *this, {*this}); }
Tensor frac(const Tensor& x) { return same_dtype_unary<Frac>(x); }
Tensor Tensor::frac() const { return ember::frac(*this); }
Tensor& Tensor::frac_() { return run_inplace_op(Frac{}, *this, {*this}); }

// ---- logical_not, nan_to_num ----------------------------------------------------------------------

Tensor logical_not(const Tensor& x) {
  return run_op(LogicalNot{}, {x}, OutSpec{DimVector(x.sizes()), kBool});
}
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }
Tensor& Tensor::logical_not_() { return run_inplace_op(LogicalNot{}, *this, {*this}); }

// Integers and bools have no nan or inf: nan_to_num copies them.
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!x.is_floating_point()) return x.clone();
  return same_dtype_unary(x, NanToNum{nan, posinf, neginf});
}
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  return ember::nan_to_num(*this, nan, posinf, neginf);
}

}  // namespace ember
