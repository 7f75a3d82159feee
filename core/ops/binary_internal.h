// Helpers shared by the elementwise op files (binary.cpp, compare.cpp, ternary.cpp): scalar
// operands as 0-dim tensors, dtype/shape preparation, in-place operand checks, and the CPU
// loops that run their formulas (the functors of binary_math.h, compare_math.h and
// ternary_math.h). Internal to those files; not part of the public API.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary_math.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/map_domain.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/binary.h"

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

/// A double as int64 without undefined behaviour: NaN is 0, values past int64's range saturate.
/// (Only integral kernels read the integer; a float op's huge or infinite scalar must not make
/// the conversion itself undefined.)
inline int64_t saturating_long(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

/// The scalar parameter of a formula (binary_math.h) from the op's Scalar.
inline ScalarParam param(const Scalar& s) {
  return {s.toDouble(), s.isFloatingPoint() ? saturating_long(s.toDouble()) : s.toLong()};
}

// The CPU loops of the functors of binary_math.h, compare_math.h and ternary_math.h: the same
// functor the CUDA kernels run (cuda/binary.h), over the dtypes of its domain, computed in
// opmath (float for float16/bfloat16). A dtype outside the domain raises "<kernel>" not
// implemented. The functor is captured by value, as the loops' lambdas always held their
// parameters.

/// out = fn(a, b), all operands of out's dtype.
template <class Fn>
void binary_map(const char* kernel, const TensorList& in, Tensor& out, const Fn& fn) {
  visit_domain<Fn::kDomain>(out.dtype(), kernel, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu::binary_kernel<T, T, T>(in[0], in[1], out, [fn](T a, T b) {
      return static_cast<T>(fn(static_cast<M>(a), static_cast<M>(b)));
    });
  });
}

/// out (bool) = fn(a, b), a and b of one dtype.
template <class Fn>
void compare_map(const char* kernel, const TensorList& in, Tensor& out, const Fn& fn) {
  visit_domain<Fn::kDomain>(in[0].dtype(), kernel, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu::binary_kernel<bool, T, T>(in[0], in[1], out,
                                   [fn](T a, T b) { return fn(static_cast<M>(a), static_cast<M>(b)); });
  });
}

/// out = fn(a, b, c), all operands of out's dtype.
template <class Fn>
void ternary_map(const char* kernel, const TensorList& in, Tensor& out, const Fn& fn) {
  TensorIter iter(out, {in[0], in[1], in[2]});
  visit_domain<Fn::kDomain>(out.dtype(), kernel, [&]<typename T>() {
    using M = opmath_t<T>;
    cpu::cpu_map<T, T, T, T>(iter, [fn](T a, T b, T c) {
      return static_cast<T>(fn(static_cast<M>(a), static_cast<M>(b), static_cast<M>(c)));
    });
  });
}

/// The CUDA side of binary_map: PyTorch's "<kernel>" message for a dtype outside Fn's domain,
/// then the kernel of the same functor.
template <class Fn>
void cuda_binary_map(const char* kernel, const TensorList& in, Tensor& out, const Fn& fn) {
  check_domain<Fn::kDomain>(out.dtype(), kernel);
  cuda::binary_map(in[0], in[1], out, fn);
}

/// The CUDA side of ternary_map.
template <class Fn>
void cuda_ternary_map(const char* kernel, const TensorList& in, Tensor& out, const Fn& fn) {
  check_domain<Fn::kDomain>(out.dtype(), kernel);
  cuda::ternary_map(in[0], in[1], in[2], out, fn);
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

/// binary_map for the dividing formulas (DivTruncFn, DivFloorFn, RemainderFn, FmodFn). Their
/// integer rule stores 0 for a zero divisor, as the CUDA kernels do; the CPU raises instead,
/// noting the zero here and raising after the loop.
template <class Fn>
void dividing_map(const char* kernel, const TensorList& in, Tensor& out, const Fn& fn) {
  ZeroDivFlag zero;
  visit_domain<Fn::kDomain>(out.dtype(), kernel, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu::binary_kernel<T, T, T>(in[0], in[1], out, [&zero, fn](T a, T b) {
        if (b == 0) [[unlikely]]
          zero.set();
        return fn(a, b);
      });
    } else {
      cpu::binary_kernel<T, T, T>(in[0], in[1], out, [fn](T a, T b) {
        return static_cast<T>(fn(static_cast<M>(a), static_cast<M>(b)));
      });
    }
  });
  zero.check();
}

}  // namespace ember::binary_detail
