// Internal helpers shared by core/ops/unary.cpp and core/ops/activation.cpp: the typed loops
// of one-input elementwise ops, their dtype rules, and the constant masks that piecewise
// gradients (relu, clamp, hardtanh, ...) are built from. Not part of the public API.
#pragma once

#include <type_traits>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/map_domain.h"
#include "ember/core/ops/value_test.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/unary.h"

namespace ember::unary_impl {

/// out = fn(x) over the dtypes of Fn's domain (core/ops/map_domain.h), computed in opmath
/// (float for Half/BFloat16); other dtypes raise "<name>" not implemented for '<Type>'. The
/// CPU loop of every functor of unary_math.h and activation_math.h.
template <class Fn>
void unary_map(const char* name, const Tensor& x, Tensor& out, const Fn& fn) {
  visit_domain<Fn::kDomain>(out.dtype(), name, [&]<typename T>() {
    cpu::unary_kernel<T, T>(x, out, [&fn](T v) { return static_cast<T>(fn(static_cast<opmath_t<T>>(v))); });
  });
}

/// Elements per thread below which a transcendental SIMD map (exp, erf, gelu, ...) stays on
/// one thread: it costs several ns per element, far more than a copy.
constexpr int64_t kVecMathGrain = 8192;

/// Base of the one-input maps whose formula is a functor Fn (unary_math.h,
/// activation_math.h): the CPU loop and the CUDA kernel both run D::fn() (Fn{}, unless D holds
/// parameters and hides fn), over the dtypes of Fn's domain. A D that also defines
/// vf(vec::f8) (cpu/vec_math.h) runs float32 through that SIMD form instead, which
/// tests/core/test_elementwise_functors.cpp checks against Fn.
template <class D, class Fn>
struct MapOp : UnaryOp {
  bool elementwise() const override { return true; }
  Fn fn() const { return Fn{}; }
  void cpu(const Tensor& x, Tensor& out) const override {
    const D& d = static_cast<const D&>(*this);
    if constexpr (requires(cpu::vec::f8 v) { d.vf(v); }) {
      if (out.dtype() == kFloat) {
        cpu::unary_vec_kernel(x, out, [&d](cpu::vec::f8 v) { return d.vf(v); }, kVecMathGrain);
        return;
      }
    }
    unary_map(name(), x, out, d.fn());
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    check_domain<Fn::kDomain>(out.dtype(), name());
    cuda::unary_map(x, out, static_cast<const D&>(*this).fn());
  }
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
