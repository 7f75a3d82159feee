// The per-element formulas of the two-operand arithmetic ops (core/ops/binary.cpp, and the
// bitwise ops of compare.cpp): one functor per op, holding both its integer and its floating
// rule, compiled by the host compiler for the CPU loops and by nvcc for the CUDA kernels
// (cuda/binary.cu, division.cu, pow.cu), so the CPU tests check the math a GPU runs.
//
// As in unary_math.h, a functor is called with the compute type M of the element (opmath_t:
// float for float16/bfloat16) and returns an M that the loop stores back; kDomain says which
// dtypes the op has a kernel for (map_domain.h). Integer arithmetic wraps at the type's ends
// through unsigned arithmetic: what the CPU loops always produced in practice, without the
// undefined behaviour of signed overflow.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/core/math.h"
#include "ember/core/ops/int_math.h"
#include "ember/core/ops/map_domain.h"
#include "ember/core/ops/unary_math.h"

namespace ember {

namespace binary_math {

using int_math::is_int_v;
using int_math::wrap_add;
using int_math::wrap_mul;
using int_math::wrap_neg;
using int_math::wrap_sub;

/// base^exp by squaring, wrapping on overflow as PyTorch's powi does; a negative exponent
/// gives 1 for base 1, +-1 for base -1 and 0 otherwise (1 / base truncated).
template <class M>
EMBER_HOST_DEVICE M int_pow(M base, int64_t exp) {
  if (exp < 0) {
    if constexpr (std::is_signed_v<M>)
      if (base == -1) return (exp & 1) ? M(-1) : M(1);
    return base == 1 ? M(1) : M(0);
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);  // unsigned: overflow wraps, no UB
  for (uint64_t e = static_cast<uint64_t>(exp); e; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<M>(result);
}

}  // namespace binary_math

/// A Scalar parameter (alpha, value, exponent) as a formula reads it: integer compute types
/// take the exact int64 (an int64 beyond 2^53 would not survive a double), floating ones the
/// double. The op fills both from its Scalar.
struct ScalarParam {
  double f = 1;
  int64_t i = 1;
  template <class M>
  EMBER_HOST_DEVICE M as() const {
    if constexpr (std::is_integral_v<M>)
      return static_cast<M>(i);
    else
      return static_cast<M>(f);
  }
};

// ---- add, sub, mul, div ----------------------------------------------------------------------

/// a + alpha * b; bool goes through int arithmetic and back (true + true is true).
struct AddFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  ScalarParam alpha;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (binary_math::is_int_v<M>)
      return binary_math::wrap_add(a, binary_math::wrap_mul(alpha.as<M>(), b));
    else
      return static_cast<M>(a + alpha.as<M>() * b);
  }
};

/// a - alpha * b (bool operands were refused by the op, as PyTorch's sub_check does).
struct SubFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  ScalarParam alpha;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (binary_math::is_int_v<M>)
      return binary_math::wrap_sub(a, binary_math::wrap_mul(alpha.as<M>(), b));
    else
      return static_cast<M>(a - alpha.as<M>() * b);
  }
};

/// a * b; for bool, logical and.
struct MulFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (std::is_same_v<M, bool>)
      return a && b;
    else if constexpr (binary_math::is_int_v<M>)
      return binary_math::wrap_mul(a, b);
    else
      return a * b;
  }
};

/// True division; the op promotes integer operands to a floating dtype first.
struct DivFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    return a / b;
  }
};

/// a * s with s kept in opmath: PyTorch's mul of a float16/bfloat16 tensor by a Python number
/// rounds once, not first the number to the tensor's dtype.
struct MulScalarFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double s;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a) const {
    return a * static_cast<M>(s);
  }
};

/// a / s with s kept in opmath (see MulScalarFn).
struct DivScalarFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double s;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a) const {
    return a / static_cast<M>(s);
  }
};

// ---- rounding division, remainder, fmod ----------------------------------------------------
//
// Integer division by zero: these formulas yield 0, which is what a CUDA kernel stores (finding
// out would need a host synchronization in every integer division; PyTorch's CUDA kernels do
// not check either). The CPU loop raises "ZeroDivisionError" after the loop instead
// (binary_internal.h's dividing_map). Division by -1 is a negation, so the most negative value
// wraps instead of overflowing.

/// a / b rounded toward zero.
struct DivTruncFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (std::is_integral_v<M>) {
      if (b == 0) return M(0);
      if constexpr (std::is_signed_v<M>)
        if (b == M(-1)) return binary_math::wrap_neg(a);
      return static_cast<M>(a / b);
    } else {
      return math::trunc(a / b);
    }
  }
};

/// a / b rounded down. Floats follow PyTorch's div_floor_floating: floor(a / b) from fmod, so
/// that the quotient is exact where a / b rounds across an integer; b == 0 gives the IEEE
/// quotient, a zero quotient keeps the sign of a / b.
struct DivFloorFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (std::is_integral_v<M>) {
      if (b == 0) return M(0);
      if constexpr (std::is_signed_v<M>) {
        if (b == M(-1)) return binary_math::wrap_neg(a);
        M q = static_cast<M>(a / b);
        if (a % b != 0 && ((a < 0) != (b < 0))) --q;
        return q;
      }
      return static_cast<M>(a / b);
    } else {
      if (b == 0) return a / b;
      M mod = math::fmod(a, b);
      M div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= M(1);
      if (div == 0) return math::copysign(M(0), a / b);
      M floordiv = math::floor(div);
      if (div - floordiv > M(0.5)) floordiv += M(1);
      return floordiv;
    }
  }
};

/// Python's %: the result takes the divisor's sign.
struct RemainderFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (std::is_integral_v<M>) {
      if (b == 0) return M(0);
      if constexpr (std::is_signed_v<M>) {
        if (b == M(-1)) return M(0);
        M r = static_cast<M>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<M>(r + b);
        return r;
      }
      return static_cast<M>(a % b);
    } else {
      M mod = math::fmod(a, b);
      if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
      return mod;
    }
  }
};

/// C's fmod (and %): the result takes the dividend's sign.
struct FmodFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (std::is_integral_v<M>) {
      if (b == 0) return M(0);
      if constexpr (std::is_signed_v<M>)
        if (b == M(-1)) return M(0);
      return static_cast<M>(a % b);
    } else {
      return math::fmod(a, b);
    }
  }
};

// ---- pow, atan2 ------------------------------------------------------------------------------

/// a^b; integers by squaring (binary_math::int_pow) with the exponent taken as int64.
struct PowFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (std::is_integral_v<M>)
      return binary_math::int_pow(a, static_cast<int64_t>(b));
    else
      return math::pow(a, b);
  }
};

/// x^e for a scalar exponent e, the general case: floating x from the C pow, integer x by
/// squaring with the exact int64 exponent. visit_pow_scalar picks the exact forms first.
struct PowScalarFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  ScalarParam exponent;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>)
      return binary_math::int_pow(v, exponent.i);
    else
      return math::pow(v, static_cast<M>(exponent.f));
  }
};

/// x^3 as PyTorch computes it for the exponent 3 (two products, not pow).
struct CubeFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v * v * v;
  }
};

/// x^-2 as PyTorch computes it for the exponent -2.
struct InvSquareFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return M(1) / (v * v);
  }
};

/// Calls f with the formula of pow(x, exponent) for x of dtype t, on either device: for a
/// floating x the exponents PyTorch computes exactly (0.5, 2, 3, -0.5, -1, -2) get their own
/// functor (sqrt, x * x, ...), so that both devices round alike and the CPU loop of each stays
/// a simple, vectorizable one; everything else is PowScalarFn.
template <class F>
void visit_pow_scalar(ScalarType t, const ScalarParam& exponent, F&& f) {
  if (is_floating_point(t)) {
    const double e = exponent.f;
    if (e == 0.5) return f(SqrtFn{});
    if (e == 2) return f(SquareFn{});
    if (e == 3) return f(CubeFn{});
    if (e == -0.5) return f(RsqrtFn{});
    if (e == -1) return f(ReciprocalFn{});
    if (e == -2) return f(InvSquareFn{});
  }
  f(PowScalarFn{exponent});
}

/// The angle of (b, a).
struct Atan2Fn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    return math::atan2(a, b);
  }
};

// ---- maximum, minimum, bitwise ---------------------------------------------------------------

/// std::max's choice (the first operand on ties, so maximum(-0, 0) is -0), with a NaN of
/// either operand propagated.
struct MaximumFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (!std::is_integral_v<M>)
      if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
    return a < b ? b : a;
  }
};

/// std::min's choice (the first operand on ties), with NaN propagated.
struct MinimumFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    if constexpr (!std::is_integral_v<M>)
      if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
    return b < a ? b : a;
  }
};

struct BitwiseAndFn {
  static constexpr MapDomain kDomain = MapDomain::kIntegral;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    return static_cast<M>(a & b);
  }
};
struct BitwiseOrFn {
  static constexpr MapDomain kDomain = MapDomain::kIntegral;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    return static_cast<M>(a | b);
  }
};
struct BitwiseXorFn {
  static constexpr MapDomain kDomain = MapDomain::kIntegral;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b) const {
    return static_cast<M>(a ^ b);
  }
};

}  // namespace ember
