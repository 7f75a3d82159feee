// Helpers shared by the elementwise op files (binary.cpp, compare.cpp, ternary.cpp): scalar
// operands as 0-dim tensors, dtype/shape preparation, in-place operand checks, and the typed
// loops their kernels are built from. Internal to those files; not part of the public API.
#pragma once

#include <atomic>
#include <type_traits>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"

namespace ember::binary_detail {

/// A scalar operand as a 0-dim tensor of dtype `t` on `device` (PyTorch's "wrapped number").
inline Tensor wrap_scalar(const Scalar& s, ScalarType t, Device device) {
  return full({}, s, TensorOptions().dtype(t).device(device));
}

/// Inputs cast to the compute dtype and the output spec of a broadcasting binary op.
struct Prepared {
  Tensor a, b;
  OutSpec out;
};

inline Prepared prepare(const Tensor& a, const Tensor& b, ScalarType compute, ScalarType out_dtype) {
  return {a.to(compute), b.to(compute), OutSpec{broadcast_shapes(a.sizes(), b.sizes()), out_dtype}};
}

inline Prepared prepare(const Tensor& a, const Tensor& b) {
  ScalarType t = result_type(a, b);
  return prepare(a, b, t, t);
}

inline Prepared prepare(const Tensor& a, const Scalar& b) {
  ScalarType t = result_type(a, b);
  return prepare(a, wrap_scalar(b, t, a.device()), t, t);
}

/// An in-place op writes self: the broadcast of all operands must have self's shape.
inline void check_inplace_shape(const Tensor& self, IntArrayRef broadcast) {
  EMBER_CHECK(broadcast.equals(self.sizes()), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", broadcast);
}

/// Checks an in-place op's operand: castable result and a broadcast shape equal to self's.
inline Tensor inplace_operand(const Tensor& self, const Tensor& other) {
  check_can_cast(result_type(self, other), self.dtype());
  check_inplace_shape(self, broadcast_shapes(self.sizes(), other.sizes()));
  return other.to(self.dtype());
}

inline Tensor inplace_operand(const Tensor& self, const Scalar& other) {
  check_can_cast(result_type(self, other), self.dtype());
  return wrap_scalar(other, self.dtype(), self.device());
}

/// Raises PyTorch's message for a kernel that has no instance for this dtype.
[[noreturn]] inline void not_implemented(const char* kernel, ScalarType t) {
  detail::throw_error(detail::str_cat("\"", kernel, "\" not implemented for '", scalar_type_name(t), "'"));
}

/// Runs f(a, b) in opmath over a broadcasting TensorIter; all operands share dtype T.
/// f is a generic callable `[]<typename M>(M a, M b)` instantiated for every dtype.
template <class F>
void same_type_kernel(const TensorList& in, Tensor& out, const F& f) {
  visit_dtype(out.dtype(), [&]<typename T>() {
    using M = opmath_t<T>;
    cpu::binary_kernel<T, T, T>(in[0], in[1], out, [&f](T a, T b) {
      return static_cast<T>(f.template operator()<M>(static_cast<M>(a), static_cast<M>(b)));
    });
  });
}

/// out = f(a, b) for floating dtypes, computed in opmath; other dtypes raise "<kernel>" not
/// implemented. f is a generic lambda `[](auto a, auto b)`.
template <class F>
void float_binary_kernel(const char* kernel, const TensorList& in, Tensor& out, const F& f) {
  visit_float_dtype(out.dtype(), kernel, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu::binary_kernel<T, T, T>(in[0], in[1], out, [&f](T a, T b) {
      return static_cast<T>(f(static_cast<M>(a), static_cast<M>(b)));
    });
  });
}

/// Arithmetic with separate integer and floating formulas (integer division rounds, floats
/// follow IEEE); bool raises "<kernel>" not implemented for 'Bool', as in PyTorch.
template <class IntF, class FloatF>
void arith_kernel(const char* kernel, const TensorList& in, Tensor& out, const IntF& int_f,
                  const FloatF& float_f) {
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      not_implemented(kernel, kBool);
    } else if constexpr (is_float_v<T>) {
      using M = opmath_t<T>;
      cpu::binary_kernel<T, T, T>(in[0], in[1], out, [&float_f](T a, T b) {
        return static_cast<T>(float_f(static_cast<M>(a), static_cast<M>(b)));
      });
    } else {
      cpu::binary_kernel<T, T, T>(in[0], in[1], out,
                                  [&int_f](T a, T b) { return static_cast<T>(int_f(a, b)); });
    }
  });
}

/// Integer division by zero raises "ZeroDivisionError" (PyTorch's text). An exception cannot
/// leave the OpenMP region a kernel runs in, so kernels set this flag and the op raises after.
class ZeroDivFlag {
 public:
  void set() const { hit_.store(true, std::memory_order_relaxed); }
  void check() const { EMBER_CHECK(!hit_.load(std::memory_order_relaxed), "ZeroDivisionError"); }

 private:
  mutable std::atomic<bool> hit_{false};
};

/// -a with two's-complement wrap-around (a / -1 overflows for the most negative integer).
template <class T>
T wrap_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}

}  // namespace ember::binary_detail
