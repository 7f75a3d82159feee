// Internal helpers shared by core/ops/unary.cpp and core/ops/activation.cpp: the typed loops
// of one-input elementwise ops, their dtype rules, and the constant masks that piecewise
// gradients (relu, clamp, hardtanh, ...) are built from. Not part of the public API.
#pragma once

#include <type_traits>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/value_test.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/unary.h"

namespace ember::unary_impl {

/// out = f(x) for floating dtypes, computed in opmath (float for Half/BFloat16); other dtypes
/// raise "<name>" not implemented for '<Type>'.
template <class F>
void float_kernel(const char* name, const Tensor& x, Tensor& out, const F& f) {
  visit_float_dtype(out.dtype(), name, [&]<typename T>() {
    cpu::unary_kernel<T, T>(x, out, [&f](T v) { return static_cast<T>(f(static_cast<opmath_t<T>>(v))); });
  });
}

/// Raises "<name>" not implemented for '<Type>' unless t is floating (float_kernel's check,
/// for the CUDA paths).
inline void check_float_dtype(const char* name, ScalarType t) {
  visit_float_dtype(t, name, []<typename>() {});
}

/// Raises "<name>" not implemented for 'Bool' (NumericMap's check, for the CUDA paths).
inline void check_not_bool(const char* name, ScalarType t) {
  if (t == kBool) detail::throw_error(detail::str_cat("\"", name, "\" not implemented for 'Bool'"));
}

/// Elements per thread below which a transcendental SIMD map (exp, erf, gelu, ...) stays on
/// one thread: it costs several ns per element, far more than a copy.
constexpr int64_t kVecMathGrain = 8192;

/// Base of floating-point maps (sin, sigmoid, gelu, ...): D::f(v) gets an opmath value on the
/// CPU; on CUDA the map D::kCuda of cuda/unary.h computes the same formula, with the
/// parameters D::cuda_args() returns. A map that also defines vf(vec::f8) (cpu/vec_math.h)
/// runs float32 through it; other dtypes through f.
template <class D>
struct FloatMap : UnaryOp {
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    const D& d = static_cast<const D&>(*this);
    if constexpr (requires(cpu::vec::f8 v) { d.vf(v); }) {
      if (out.dtype() == kFloat) {
        cpu::unary_vec_kernel(x, out, [&d](cpu::vec::f8 v) { return d.vf(v); }, kVecMathGrain);
        return;
      }
    }
    float_kernel(name(), x, out, [&d](auto v) { return d.f(v); });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    check_float_dtype(name(), out.dtype());
    cuda::unary(D::kCuda, x, out, static_cast<const D&>(*this).cuda_args());
  }
  /// Parametrised maps (leaky_relu's slope, ...) hide this.
  cuda::UnaryArgs cuda_args() const { return {}; }
};

/// Base of maps defined for every dtype but bool (abs, floor, relu, ...): D::f(v) gets the
/// integer itself or the opmath value of a float; bool raises "<name>" not implemented.
/// CUDA as FloatMap's.
template <class D>
struct NumericMap : UnaryOp {
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    const D& d = static_cast<const D&>(*this);
    visit_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {
        detail::throw_error(detail::str_cat("\"", name(), "\" not implemented for 'Bool'"));
      } else {
        cpu::unary_kernel<T, T>(x, out, [&d](T v) { return static_cast<T>(d.f(static_cast<opmath_t<T>>(v))); });
      }
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    check_not_bool(name(), out.dtype());
    cuda::unary(D::kCuda, x, out, static_cast<const D&>(*this).cuda_args());
  }
  cuda::UnaryArgs cuda_args() const { return {}; }
};

/// An op that maps integers to the default float dtype (exp, log, sin, ...).
template <class OpT>
Tensor float_unary(const Tensor& x, OpT op = {}) {
  ScalarType t = promote_to_float(x.dtype());
  return run_op(std::move(op), {x.to(t)}, OutSpec{DimVector(x.sizes()), t});
}

/// Its in-place form: an integer self cannot hold the float result.
template <class OpT>
Tensor& float_unary_(Tensor& x, OpT op = {}) {
  check_can_cast(promote_to_float(x.dtype()), x.dtype());
  return run_inplace_op(std::move(op), x, {x});
}

/// An op whose output keeps the input's dtype (abs, floor, gelu, ...).
template <class OpT>
Tensor same_dtype_unary(const Tensor& x, OpT op = {}) {
  return run_op(std::move(op), {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}

/// test(v) over a floating tensor as a bool tensor, outside autograd: the masks that route
/// gradients of piecewise ops. They are constants of the forward input, so their own
/// derivative is zero and double backward needs nothing from them.
Tensor const_mask(const Tensor& x, const ValueTest& test);

/// test(v) ? if_true : if_false over a floating tensor, same dtype, outside autograd (a
/// constant gradient factor).
Tensor const_select(const Tensor& x, const ValueTest& test, double if_true, double if_false);

/// where(mask, t, 0), differentiable in t. Unlike t * mask it yields exact zeros where the
/// mask is false even when t holds inf or nan there (as PyTorch's threshold_backward does).
Tensor masked(const Tensor& t, const Tensor& mask);

}  // namespace ember::unary_impl
