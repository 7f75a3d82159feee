// Binary elementwise ops. Each op: its formula, CPU kernel and backward in one struct.
// Public functions promote dtypes (core/type_promotion.h), broadcast shapes, and call run_op;
// gradients are summed back over broadcast dims by the engine (autograd/engine.cpp).
#include "ember/core/ops/binary.h"

#include <string>

#include "ember/core/autocast.h"
#include "ember/core/ops/binary_internal.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/ops/unary.h"
#include "ember/core/ops/unary_internal.h"
#include "ember/cuda/binary.h"

namespace ember {

using namespace binary_detail;

namespace {

/// PyTorch's alpha_check: alpha may not be bool unless the result is, nor floating for
/// integral results (its value would be truncated silently).
void alpha_check(ScalarType dtype, const Scalar& alpha) {
  EMBER_CHECK(!alpha.isBoolean() || dtype == kBool, "Boolean alpha only supported for Boolean results.");
  EMBER_CHECK(is_floating_point(dtype) || alpha.isIntegral(true),
              "For integral input tensors, argument alpha must not be a floating point number.");
}

/// PyTorch's sub_check: subtraction with a bool operand is refused (a scalar counts as bool
/// when it is one).
void sub_check(ScalarType a, ScalarType b) {
  EMBER_CHECK(a != kBool || b != kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  EMBER_CHECK(a != kBool && b != kBool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
              "invert a mask, use the `~` or `logical_not()` operator instead.");
}

ScalarType bool_or_not(const Scalar& s) { return s.isBoolean() ? kBool : kLong; }

// add: d/da (a + alpha b) = 1, d/db = alpha.
struct Add final : Op {
  Scalar alpha;
  explicit Add(Scalar a) : alpha(a) {}
  const char* name() const override { return "add"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  AddFn fn() const { return {param(alpha)}; }
  void cpu(const TensorList& in, TensorList& out) const override { binary_map("add_cpu", in, out[0], fn()); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map("add_cuda", in, out[0], fn());
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gb;
    if (s.needs_grad(1)) gb = alpha.toDouble() == 1.0 ? g[0] : g[0] * alpha;
    return {g[0], gb};
  }
};

// sub: d/da (a - alpha b) = 1, d/db = -alpha.
// rsub(a, b) = b - alpha a runs this op with swapped inputs, under PyTorch's node name.
struct Sub final : Op {
  Scalar alpha;
  const char* node;
  explicit Sub(Scalar a, const char* n = "SubBackward0") : alpha(a), node(n) {}
  const char* name() const override { return "sub"; }
  std::string node_name() const override { return node; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  SubFn fn() const { return {param(alpha)}; }
  void cpu(const TensorList& in, TensorList& out) const override { binary_map("sub_cpu", in, out[0], fn()); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map("sub_cuda", in, out[0], fn());
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gb;
    if (s.needs_grad(1)) gb = g[0] * (-alpha.toDouble());
    return {g[0], gb};
  }
};

// mul: d/da (a b) = b, d/db = a.
struct Mul final : Op {
  const char* name() const override { return "mul"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    binary_map("mul_cpu", in, out[0], MulFn{});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map("mul_cuda", in, out[0], MulFn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    if (s.needs_grad(0)) ga = g[0] * s.input(1);
    if (s.needs_grad(1)) gb = g[0] * s.input(0);
    return {ga, gb};
  }
};

// div (true division): d/da (a / b) = 1 / b, d/db = -a / b^2.
struct Div final : Op {
  const char* name() const override { return "div"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    binary_map("div_true_cpu", in, out[0], DivFn{});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map("div_true_cuda", in, out[0], DivFn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    Tensor b = s.input(1);
    if (s.needs_grad(0)) ga = g[0] / b;
    if (s.needs_grad(1)) gb = -g[0] * s.input(0) / (b * b);
    return {ga, gb};
  }
};

// mul and div of a float16/bfloat16 tensor by a Scalar: PyTorch keeps the scalar in opmath
// (float) instead of rounding it to the tensor's dtype first, so x * 0.7 and x / 0.7 round
// once (ATen's mul and true-division kernels take a reduced-float operand's scalar that way;
// add and sub round the scalar to the dtype, and so does ember, through Add/Sub). Other
// dtypes go through Mul/Div with the scalar wrapped in the result's dtype, which is the same
// arithmetic for them.
struct ScalarMulDiv final : Op {
  Scalar s;
  bool divide;
  ScalarMulDiv(Scalar scalar, bool div) : s(scalar), divide(div) {}
  const char* name() const override { return divide ? "div" : "mul"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (divide)
      unary_impl::unary_map("div_true_cpu", in[0], out[0], DivScalarFn{s.toDouble()});
    else
      unary_impl::unary_map("mul_cpu", in[0], out[0], MulScalarFn{s.toDouble()});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    check_domain<MapDomain::kFloating>(out[0].dtype(), divide ? "div_true_cuda" : "mul_cuda");
    if (divide)
      cuda::unary_map(in[0], out[0], DivScalarFn{s.toDouble()});
    else
      cuda::unary_map(in[0], out[0], MulScalarFn{s.toDouble()});
  }
  TensorList backward(const SavedTensors&, const TensorList& g) const override {
    return {divide ? g[0].div(s) : g[0].mul(s)};
  }
};

bool is_reduced_float(ScalarType t) { return t == kHalf || t == kBFloat16; }

/// True division computes in floating point even for integer inputs.
Prepared prepare_div(const Tensor& a, const Tensor& b) {
  ScalarType t = promote_to_float(result_type(a, b));
  return prepare(a, b, t, t);
}

// ---- rounding division, remainder, fmod ----------------------------------------------------

enum class Rounding { kTrunc, kFloor };

std::optional<Rounding> parse_rounding(std::optional<std::string_view> mode) {
  if (!mode) return std::nullopt;
  if (*mode == "trunc") return Rounding::kTrunc;
  if (*mode == "floor") return Rounding::kFloor;
  detail::throw_error(detail::str_cat(
      "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'"));
}

/// Calls f(fn, cpu kernel name, cuda kernel name) with the formula of a rounding mode.
template <class F>
void visit_rounding(Rounding mode, F&& f) {
  if (mode == Rounding::kTrunc)
    f(DivTruncFn{}, "div_trunc_cpu", "div_trunc_cuda");
  else
    f(DivFloorFn{}, "div_floor_cpu", "div_floor_cuda");
}

// div with rounding: piecewise constant, so both gradients are zero (as in PyTorch).
struct DivMode final : Op {
  Rounding mode;
  bool scalar_other;  // div(Tensor, Scalar, mode): PyTorch's DivBackward3
  explicit DivMode(Rounding m, bool scalar = false) : mode(m), scalar_other(scalar) {}
  const char* name() const override { return "div"; }
  std::string node_name() const override { return scalar_other ? "DivBackward3" : "DivBackward2"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    visit_rounding(
        mode, [&](const auto& fn, const char* kernel, const char*) { dividing_map(kernel, in, out[0], fn); });
  }
  // Integer division by zero is not detected on CUDA (it would need a host sync): cuda/binary.h.
  void cuda(const TensorList& in, TensorList& out) const override {
    visit_rounding(mode, [&](const auto& fn, const char*, const char* kernel) {
      cuda_binary_map(kernel, in, out[0], fn);
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    if (s.needs_grad(0)) ga = zeros_like(g[0]);
    if (s.needs_grad(1)) gb = zeros_like(g[0]);
    return {ga, gb};
  }
};

// remainder (Python sign) and fmod (C sign): a - b q with q = floor(a / b) or trunc(a / b),
// so d/da = 1 and d/db = -q (q is piecewise constant).
struct Mod final : Op {
  bool python_sign;   // remainder; fmod otherwise
  bool scalar_other;  // the Scalar overload: PyTorch's ...Backward0 (the Tensor one is ...Backward1)
  Mod(bool python, bool scalar) : python_sign(python), scalar_other(scalar) {}
  const char* name() const override { return python_sign ? "remainder" : "fmod"; }
  std::string node_name() const override {
    return std::string(python_sign ? "Remainder" : "Fmod") + (scalar_other ? "Backward0" : "Backward1");
  }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (python_sign)
      dividing_map("remainder_cpu", in, out[0], RemainderFn{});
    else
      dividing_map("fmod_cpu", in, out[0], FmodFn{});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    if (python_sign)
      cuda_binary_map("remainder_cuda", in, out[0], RemainderFn{});
    else
      cuda_binary_map("fmod_cuda", in, out[0], FmodFn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gb;
    if (s.needs_grad(1)) gb = -g[0] * ember::div(s.input(0), s.input(1), python_sign ? "floor" : "trunc");
    return {g[0], gb};
  }
};

// ---- pow -----------------------------------------------------------------------------------

// pow(x, e) for a scalar e: d/dx x^e = e x^(e-1); zero when e == 0 (x^0 is constant 1).
struct PowScalar final : UnaryOp {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  Scalar exponent;
  explicit PowScalar(Scalar e) : exponent(e) {}
  const char* name() const override { return "pow"; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    check_domain<PowScalarFn::kDomain>(out.dtype(), "pow");
    visit_pow_scalar(out.dtype(), param(exponent),
                     [&](const auto& fn) { unary_impl::unary_map("pow", x, out, fn); });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    check_domain<PowScalarFn::kDomain>(out.dtype(), "pow_cuda");
    visit_pow_scalar(out.dtype(), param(exponent), [&](const auto& fn) { cuda::unary_map(x, out, fn); });
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    if (exponent.toDouble() == 0) return zeros_like(grad);
    Scalar em1 = exponent.isFloatingPoint() ? Scalar(exponent.toDouble() - 1) : Scalar(exponent.toLong() - 1);
    return grad * (ember::pow(s.input(0), em1) * exponent);
  }
};

// pow(a, b) for tensors: d/da = b a^(b-1) (zero where b == 0), d/db = a^b log(a), taken as
// zero where a == 0 and b >= 0 (the limit PyTorch uses, instead of 0 * -inf = nan).
struct PowTensor final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  bool scalar_base;  // pow(Scalar, Tensor): PyTorch's PowBackward2
  explicit PowTensor(bool scalar = false) : scalar_base(scalar) {}
  const char* name() const override { return "pow"; }
  std::string node_name() const override { return scalar_base ? "PowBackward2" : "PowBackward1"; }
  Save saves() const override { return Save::kBoth; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override { binary_map("pow", in, out[0], PowFn{}); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map("pow_cuda", in, out[0], PowFn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor a = s.input(0), b = s.input(1), ga, gb;
    if (s.needs_grad(0)) ga = where(b == 0, 0.0, g[0] * (b * ember::pow(a, b - 1)));
    if (s.needs_grad(1)) gb = g[0] * where(logical_and(a == 0, b >= 0), 0.0, s.output() * log(a));
    return {ga, gb};
  }
};

/// PyTorch refuses a negative integer scalar exponent for integer results (1/x truncates).
void check_int_pow(ScalarType result, const Scalar& e) {
  EMBER_CHECK(!(is_integral(result, true) && e.isIntegral(false) && e.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
}

// ---- atan2, maximum, minimum ---------------------------------------------------------------

// atan2(a, b) = angle of (b, a): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2).
struct Atan2 final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kPromoteCudaOnly;
  const char* name() const override { return "atan2"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    binary_map("atan2_cpu", in, out[0], Atan2Fn{});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map("atan2_cuda", in, out[0], Atan2Fn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor a = s.input(0), b = s.input(1), ga, gb;
    Tensor denom = a * a + b * b;
    if (s.needs_grad(0)) ga = g[0] * b / denom;
    if (s.needs_grad(1)) gb = -(g[0] * a) / denom;
    return {ga, gb};
  }
};

// maximum/minimum: the gradient goes to the selected input; on ties it is split equally,
// grad/2 to each (PyTorch's convention). NaN propagates from either input.
struct MaxMin final : Op {
  bool is_max;
  explicit MaxMin(bool m) : is_max(m) {}
  const char* name() const override { return is_max ? "maximum" : "minimum"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (is_max)
      binary_map("maximum_cpu", in, out[0], MaximumFn{});
    else
      binary_map("minimum_cpu", in, out[0], MinimumFn{});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    if (is_max)
      cuda_binary_map("maximum_cuda", in, out[0], MaximumFn{});
    else
      cuda_binary_map("minimum_cuda", in, out[0], MinimumFn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor a = s.input(0), b = s.input(1), ga, gb;
    Tensor shared = where(a == b, g[0] / 2, g[0]);
    if (s.needs_grad(0)) ga = where(is_max ? a < b : a > b, 0.0, shared);
    if (s.needs_grad(1)) gb = where(is_max ? a > b : a < b, 0.0, shared);
    return {ga, gb};
  }
};

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  auto p = prepare(a, b);
  alpha_check(p.out.dtype, alpha);
  return run_op(Add{alpha}, {p.a, p.b}, p.out);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  auto p = prepare(a, b);
  alpha_check(p.out.dtype, alpha);
  return run_op(Add{alpha}, {p.a, p.b}, p.out);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  sub_check(a.dtype(), b.dtype());
  auto p = prepare(a, b);
  alpha_check(p.out.dtype, alpha);
  return run_op(Sub{alpha}, {p.a, p.b}, p.out);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  sub_check(a.dtype(), bool_or_not(b));
  auto p = prepare(a, b);
  alpha_check(p.out.dtype, alpha);
  return run_op(Sub{alpha}, {p.a, p.b}, p.out);
}
Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  sub_check(a.dtype(), b.dtype());
  auto p = prepare(b, a);
  alpha_check(p.out.dtype, alpha);
  return run_op(Sub{alpha, "RsubBackward0"}, {p.a, p.b}, p.out);
}
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  sub_check(a.dtype(), bool_or_not(b));
  ScalarType t = result_type(a, b);
  alpha_check(t, alpha);
  Tensor wrapped = wrap_scalar(b, t, a.device());
  return run_op(Sub{alpha, "RsubBackward1"}, {wrapped, a.to(t)}, OutSpec{DimVector(a.sizes()), t});
}
Tensor mul(const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(Mul{}, {p.a, p.b}, p.out);
}
Tensor mul(const Tensor& a, const Scalar& b) {
  if (ScalarType t = result_type(a, b); is_reduced_float(t))
    return run_op(ScalarMulDiv{b, false}, {a.to(t)}, OutSpec{DimVector(a.sizes()), t});
  auto p = prepare(a, b);
  return run_op(Mul{}, {p.a, p.b}, p.out);
}
Tensor div(const Tensor& a, const Tensor& b) {
  auto p = prepare_div(a, b);
  return run_op(Div{}, {p.a, p.b}, p.out);
}
Tensor div(const Tensor& a, const Scalar& b) {
  ScalarType t = promote_to_float(result_type(a, b));
  if (is_reduced_float(t)) return run_op(ScalarMulDiv{b, true}, {a.to(t)}, OutSpec{DimVector(a.sizes()), t});
  return div(a, wrap_scalar(b, t, a.device()));
}
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  std::optional<Rounding> mode = parse_rounding(rounding_mode);
  if (!mode) return div(a, b);
  auto p = prepare(a, b);  // rounding division keeps integer dtypes
  return run_op(DivMode{*mode}, {p.a, p.b}, p.out);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode) {
  std::optional<Rounding> mode = parse_rounding(rounding_mode);
  if (!mode) return div(a, b);
  auto p = prepare(a, b);
  return run_op(DivMode{*mode, true}, {p.a, p.b}, p.out);
}
Tensor floor_divide(const Tensor& a, const Tensor& b) { return div(a, b, "floor"); }
Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }

Tensor remainder(const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(Mod{true, false}, {p.a, p.b}, p.out);
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  auto p = prepare(a, b);
  return run_op(Mod{true, true}, {p.a, p.b}, p.out);
}
Tensor fmod(const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(Mod{false, false}, {p.a, p.b}, p.out);
}
Tensor fmod(const Tensor& a, const Scalar& b) {
  auto p = prepare(a, b);
  return run_op(Mod{false, true}, {p.a, p.b}, p.out);
}

Tensor pow(const Tensor& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(
        PowTensor::kAutocast, [](const Tensor& x, const Tensor& y) { return pow(x, y); }, a, b);
  auto p = prepare(a, b);
  return run_op(PowTensor{}, {p.a, p.b}, p.out);
}
Tensor pow(const Tensor& a, const Scalar& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(
        PowScalar::kAutocast, [](const Tensor& x, const Scalar& y) { return pow(x, y); }, a, b);
  ScalarType t = result_type(a, b);
  check_int_pow(t, b);
  return run_op(PowScalar{b}, {a.to(t)}, OutSpec{DimVector(a.sizes()), t});
}
Tensor pow(const Scalar& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(
        PowTensor::kAutocast, [](const Scalar& x, const Tensor& y) { return pow(x, y); }, a, b);
  // The base becomes a 0-dim tensor; a gradient flows to the exponent only.
  auto p = prepare(wrap_scalar(a, result_type(a, b), b.device()), b);
  return run_op(PowTensor{true}, {p.a, p.b}, p.out);
}

Tensor atan2(const Tensor& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Atan2::kAutocast, &atan2, a, b);
  auto p = prepare_div(a, b);  // integers compute in the default float dtype
  return run_op(Atan2{}, {p.a, p.b}, p.out);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(MaxMin{true}, {p.a, p.b}, p.out);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(MaxMin{false}, {p.a, p.b}, p.out);
}

// ---- Tensor methods and operators ---------------------------------------------------------
Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  Tensor other = inplace_operand(*this, o);
  alpha_check(dtype(), alpha);
  return run_inplace_op(Add{alpha}, *this, {*this, other});
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  Tensor other = inplace_operand(*this, o);
  alpha_check(dtype(), alpha);
  return run_inplace_op(Add{alpha}, *this, {*this, other});
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  sub_check(dtype(), o.dtype());
  Tensor other = inplace_operand(*this, o);
  alpha_check(dtype(), alpha);
  return run_inplace_op(Sub{alpha}, *this, {*this, other});
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) {
  sub_check(dtype(), bool_or_not(o));
  Tensor other = inplace_operand(*this, o);
  alpha_check(dtype(), alpha);
  return run_inplace_op(Sub{alpha}, *this, {*this, other});
}
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return ember::mul(*this, o); }
Tensor& Tensor::mul_(const Tensor& o) {
  return run_inplace_op(Mul{}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::mul_(const Scalar& o) {
  if (is_reduced_float(dtype())) {
    check_can_cast(result_type(*this, o), dtype());
    return run_inplace_op(ScalarMulDiv{o, false}, *this, {*this});
  }
  return run_inplace_op(Mul{}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::div(const Tensor& o) const { return ember::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return ember::div(*this, o); }
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> m) const {
  return ember::div(*this, o, m);
}
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> m) const {
  return ember::div(*this, o, m);
}
Tensor& Tensor::div_(const Tensor& o) {
  check_can_cast(promote_to_float(result_type(*this, o)), dtype());
  return run_inplace_op(Div{}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::div_(const Scalar& o) {
  check_can_cast(promote_to_float(result_type(*this, o)), dtype());
  if (is_reduced_float(dtype())) return run_inplace_op(ScalarMulDiv{o, true}, *this, {*this});
  return run_inplace_op(Div{}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> m) {
  std::optional<Rounding> mode = parse_rounding(m);
  if (!mode) return div_(o);
  return run_inplace_op(DivMode{*mode}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::remainder(const Tensor& o) const { return ember::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return ember::remainder(*this, o); }
Tensor& Tensor::remainder_(const Tensor& o) {
  return run_inplace_op(Mod{true, false}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::remainder_(const Scalar& o) {
  return run_inplace_op(Mod{true, true}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::fmod(const Tensor& o) const { return ember::fmod(*this, o); }
Tensor Tensor::fmod(const Scalar& o) const { return ember::fmod(*this, o); }
Tensor& Tensor::fmod_(const Tensor& o) {
  return run_inplace_op(Mod{false, false}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::fmod_(const Scalar& o) {
  return run_inplace_op(Mod{false, true}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, e); }
Tensor& Tensor::pow_(const Tensor& e) {
  return run_inplace_op(PowTensor{}, *this, {*this, inplace_operand(*this, e)});
}
Tensor& Tensor::pow_(const Scalar& e) {
  check_can_cast(result_type(*this, e), dtype());
  check_int_pow(dtype(), e);
  return run_inplace_op(PowScalar{e}, *this, {*this});
}
Tensor Tensor::atan2(const Tensor& o) const { return ember::atan2(*this, o); }
Tensor& Tensor::atan2_(const Tensor& o) {
  check_can_cast(promote_to_float(result_type(*this, o)), dtype());
  return run_inplace_op(Atan2{}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) {
  ScalarType t = promote_to_float(result_type(b, a));
  return div(wrap_scalar(a, t, b.device()), b);
}
Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }

}  // namespace ember
