// Unary elementwise ops and activations. Each op: its formula, CPU kernel and backward in
// one struct; backward reuses the saved output where the derivative is a function of it.
#include "ember/core/ops/unary.h"

#include <cmath>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/type_promotion.h"

namespace ember {
namespace {

/// out = f(x) computed in opmath for floating dtypes.
template <class F>
void float_kernel(const char* name, const Tensor& x, Tensor& out, const F& f) {
  visit_float_dtype(out.dtype(), name, [&]<typename T>() {
    cpu::unary_kernel<T, T>(x, out, [&f](T v) { return static_cast<T>(f(static_cast<opmath_t<T>>(v))); });
  });
}

/// An op that maps integers to the default float dtype (exp, log, sin, ...).
template <class OpT>
Tensor float_unary(const Tensor& x, OpT op = {}) {
  ScalarType t = promote_to_float(x.dtype());
  return run_op(std::move(op), {x.to(t)}, OutSpec{DimVector(x.sizes()), t});
}

template <class OpT>
Tensor& float_unary_(Tensor& x, OpT op = {}) {
  check_can_cast(promote_to_float(x.dtype()), x.dtype());
  return run_inplace_op(std::move(op), x, {x});
}

// neg: d/dx (-x) = -1.
struct Neg final : UnaryOp {
  const char* name() const override { return "neg"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {
        detail::throw_error("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                            "to invert a mask, use the `~` or `logical_not()` operator instead.");
      } else {
        cpu::unary_kernel<T, T>(x, out, [](T v) { return static_cast<T>(-static_cast<opmath_t<T>>(v)); });
      }
    });
  }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override { return -grad; }
};

// exp: d/dx e^x = e^x, so backward reuses the saved output.
struct Exp final : UnaryOp {
  const char* name() const override { return "exp"; }
  Save saves() const override { return Save::kOutputs; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    float_kernel(name(), x, out, [](auto v) { return std::exp(v); });
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override { return grad * s.output(); }
};

/// A predicate over floating values producing bool (isnan, isinf, isfinite): no gradient.
template <class Pred>
Tensor float_predicate(const Tensor& x, bool integer_result, const Pred& pred) {
  Tensor out = empty(x.sizes(), TensorOptions().dtype(kBool).device(x.device()));
  if (!x.is_floating_point()) return out.fill_(integer_result);
  visit_float_dtype(x.dtype(), "isnan", [&]<typename T>() {
    cpu::unary_kernel<bool, T>(x, out, [&pred](T v) { return pred(static_cast<opmath_t<T>>(v)); });
  });
  return out;
}

}  // namespace

Tensor isnan(const Tensor& x) { return float_predicate(x, false, [](auto v) { return std::isnan(v); }); }
Tensor isinf(const Tensor& x) { return float_predicate(x, false, [](auto v) { return std::isinf(v); }); }
Tensor isfinite(const Tensor& x) { return float_predicate(x, true, [](auto v) { return std::isfinite(v); }); }
Tensor Tensor::isnan() const { return ember::isnan(*this); }
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }

Tensor neg(const Tensor& x) {
  EMBER_CHECK(x.dtype() != kBool, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
              "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return run_op(Neg{}, {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}
Tensor negative(const Tensor& x) { return neg(x); }
Tensor Tensor::neg() const { return ember::neg(*this); }
Tensor& Tensor::neg_() { return run_inplace_op(Neg{}, *this, {*this}); }

Tensor exp(const Tensor& x) { return float_unary<Exp>(x); }
Tensor Tensor::exp() const { return ember::exp(*this); }
Tensor& Tensor::exp_() { return float_unary_<Exp>(*this); }

}  // namespace ember
