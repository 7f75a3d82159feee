// Binary elementwise ops. Each op: its formula, CPU kernel and backward in one struct.
// Public functions promote dtypes (core/type_promotion.h), broadcast shapes, and call run_op;
// gradients are summed back over broadcast dims by the engine (autograd/engine.cpp).
#include "ember/core/ops/binary.h"

#include <cmath>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/unary.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"

namespace ember {
namespace {

/// A scalar operand as a 0-dim tensor of dtype `t` on `device` (PyTorch's "wrapped number").
Tensor wrap_scalar(const Scalar& s, ScalarType t, Device device) {
  return full({}, s, TensorOptions().dtype(t).device(device));
}

/// Inputs cast to the compute dtype and the output spec of a broadcasting binary op.
struct Prepared {
  Tensor a, b;
  OutSpec out;
};

Prepared prepare(const Tensor& a, const Tensor& b, ScalarType compute, ScalarType out_dtype) {
  return {a.to(compute), b.to(compute), OutSpec{broadcast_shapes(a.sizes(), b.sizes()), out_dtype}};
}

Prepared prepare(const Tensor& a, const Tensor& b) {
  ScalarType t = result_type(a, b);
  return prepare(a, b, t, t);
}

Prepared prepare(const Tensor& a, const Scalar& b) {
  ScalarType t = result_type(a, b);
  return prepare(a, wrap_scalar(b, t, a.device()), t, t);
}

/// Checks an in-place op's operand: castable result and a broadcast shape equal to self's.
Tensor inplace_operand(const Tensor& self, const Tensor& other) {
  check_can_cast(result_type(self, other), self.dtype());
  DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  EMBER_CHECK(shape.ref().equals(self.sizes()), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", shape.ref());
  return other.to(self.dtype());
}

Tensor inplace_operand(const Tensor& self, const Scalar& other) {
  check_can_cast(result_type(self, other), self.dtype());
  return wrap_scalar(other, self.dtype(), self.device());
}

/// Runs f(a, b) in opmath over a broadcasting TensorIter; all operands share dtype T.
template <class F>
void same_type_kernel(const TensorList& in, Tensor& out, const F& f) {
  visit_dtype(out.dtype(), [&]<typename T>() {
    using M = opmath_t<T>;
    cpu::binary_kernel<T, T, T>(in[0], in[1], out, [&f](T a, T b) {
      return static_cast<T>(f.template operator()<M>(static_cast<M>(a), static_cast<M>(b)));
    });
  });
}

// add: d/da (a + alpha b) = 1, d/db = alpha.
struct Add final : Op {
  Scalar alpha;
  explicit Add(Scalar a) : alpha(a) {}
  const char* name() const override { return "add"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    double al = alpha.toDouble();
    same_type_kernel(in, out[0], [al]<typename M>(M a, M b) { return static_cast<M>(a + static_cast<M>(al) * b); });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gb;
    if (s.needs_grad(1)) gb = alpha.toDouble() == 1.0 ? g[0] : g[0] * alpha;
    return {g[0], gb};
  }
};

// sub: d/da (a - alpha b) = 1, d/db = -alpha.
struct Sub final : Op {
  Scalar alpha;
  explicit Sub(Scalar a) : alpha(a) {}
  const char* name() const override { return "sub"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    double al = alpha.toDouble();
    same_type_kernel(in, out[0], [al]<typename M>(M a, M b) { return static_cast<M>(a - static_cast<M>(al) * b); });
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
    visit_dtype(out[0].dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      if constexpr (std::is_same_v<T, bool>)
        cpu::binary_kernel<T, T, T>(in[0], in[1], out[0], [](bool a, bool b) { return a && b; });
      else
        cpu::binary_kernel<T, T, T>(in[0], in[1], out[0], [](T a, T b) { return static_cast<T>(static_cast<M>(a) * static_cast<M>(b)); });
    });
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
    same_type_kernel(in, out[0], []<typename M>(M a, M b) { return a / b; });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    Tensor b = s.input(1);
    if (s.needs_grad(0)) ga = g[0] / b;
    if (s.needs_grad(1)) gb = -g[0] * s.input(0) / (b * b);
    return {ga, gb};
  }
};

/// True division computes in floating point even for integer inputs.
Prepared prepare_div(const Tensor& a, const Tensor& b) {
  ScalarType t = promote_to_float(result_type(a, b));
  return prepare(a, b, t, t);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  auto p = prepare(a, b);
  return run_op(Add{alpha}, {p.a, p.b}, p.out);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  auto p = prepare(a, b);
  return run_op(Add{alpha}, {p.a, p.b}, p.out);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  EMBER_CHECK(a.dtype() != kBool || b.dtype() != kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  auto p = prepare(a, b);
  return run_op(Sub{alpha}, {p.a, p.b}, p.out);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  auto p = prepare(a, b);
  return run_op(Sub{alpha}, {p.a, p.b}, p.out);
}
Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return sub(b, a, alpha); }
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  ScalarType t = result_type(a, b);
  return sub(wrap_scalar(b, t, a.device()), a, alpha);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(Mul{}, {p.a, p.b}, p.out);
}
Tensor mul(const Tensor& a, const Scalar& b) {
  auto p = prepare(a, b);
  return run_op(Mul{}, {p.a, p.b}, p.out);
}
Tensor div(const Tensor& a, const Tensor& b) {
  auto p = prepare_div(a, b);
  return run_op(Div{}, {p.a, p.b}, p.out);
}
Tensor div(const Tensor& a, const Scalar& b) {
  ScalarType t = promote_to_float(result_type(a, b));
  return div(a, wrap_scalar(b, t, a.device()));
}
Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }

// ---- Tensor methods and operators ---------------------------------------------------------
Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  return run_inplace_op(Add{alpha}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  return run_inplace_op(Add{alpha}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  return run_inplace_op(Sub{alpha}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) {
  return run_inplace_op(Sub{alpha}, *this, {*this, inplace_operand(*this, o)});
}
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return ember::mul(*this, o); }
Tensor& Tensor::mul_(const Tensor& o) { return run_inplace_op(Mul{}, *this, {*this, inplace_operand(*this, o)}); }
Tensor& Tensor::mul_(const Scalar& o) { return run_inplace_op(Mul{}, *this, {*this, inplace_operand(*this, o)}); }
Tensor Tensor::div(const Tensor& o) const { return ember::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return ember::div(*this, o); }
Tensor& Tensor::div_(const Tensor& o) {
  check_can_cast(promote_to_float(result_type(*this, o)), dtype());
  return run_inplace_op(Div{}, *this, {*this, inplace_operand(*this, o)});
}
Tensor& Tensor::div_(const Scalar& o) {
  check_can_cast(promote_to_float(result_type(*this, o)), dtype());
  return run_inplace_op(Div{}, *this, {*this, inplace_operand(*this, o)});
}

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

}  // namespace ember
