// ember::math: the C math library's functions for float and double, callable from host and
// device code alike, so that one functor (core/ops/*_math.h) is the formula of both the CPU
// loops and the CUDA kernels. Each overload calls the C function of its own precision (expf
// for float, exp for double): on the host that is glibc's, which std::exp(float) calls too;
// under nvcc the CUDA math library's device function of the same name.
//
// No CUDA header is needed: nvcc declares the C math functions for device code itself.
#pragma once

#include <math.h>  // NOLINT: the C functions by their C names (expf, ...), as nvcc's device code sees them

#include <limits>
#include <type_traits>

#include "ember/core/host_device.h"

namespace ember::math {

#define EMBER_MATH_UNARY(name)                                                        \
  EMBER_HOST_DEVICE inline float name(float x) { return ::name##f(x); }               \
  EMBER_HOST_DEVICE inline double name(double x) { return ::name(x); }

EMBER_MATH_UNARY(exp)
EMBER_MATH_UNARY(exp2)
EMBER_MATH_UNARY(expm1)
EMBER_MATH_UNARY(log)
EMBER_MATH_UNARY(log2)
EMBER_MATH_UNARY(log10)
EMBER_MATH_UNARY(log1p)
EMBER_MATH_UNARY(sqrt)
EMBER_MATH_UNARY(sin)
EMBER_MATH_UNARY(cos)
EMBER_MATH_UNARY(tan)
EMBER_MATH_UNARY(asin)
EMBER_MATH_UNARY(acos)
EMBER_MATH_UNARY(atan)
EMBER_MATH_UNARY(sinh)
EMBER_MATH_UNARY(cosh)
EMBER_MATH_UNARY(tanh)
EMBER_MATH_UNARY(asinh)
EMBER_MATH_UNARY(acosh)
EMBER_MATH_UNARY(atanh)
EMBER_MATH_UNARY(erf)
EMBER_MATH_UNARY(erfc)
EMBER_MATH_UNARY(floor)
EMBER_MATH_UNARY(ceil)
EMBER_MATH_UNARY(trunc)
EMBER_MATH_UNARY(fabs)
// Rounds halves to the even neighbour (the default rounding mode), as torch.round does.
EMBER_MATH_UNARY(nearbyint)

#undef EMBER_MATH_UNARY

#define EMBER_MATH_BINARY(name)                                                                    \
  EMBER_HOST_DEVICE inline float name(float x, float y) { return ::name##f(x, y); }                \
  EMBER_HOST_DEVICE inline double name(double x, double y) { return ::name(x, y); }

EMBER_MATH_BINARY(pow)
EMBER_MATH_BINARY(fmod)
EMBER_MATH_BINARY(atan2)
EMBER_MATH_BINARY(copysign)

#undef EMBER_MATH_BINARY

// Fused: x * y + z rounded once, on both devices (an FMA where the formula has one).
EMBER_HOST_DEVICE inline float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
EMBER_HOST_DEVICE inline double fma(double x, double y, double z) { return ::fma(x, y, z); }

/// x != x, written out so it holds under any floating-point flags and for integer M (never).
template <class M>
EMBER_HOST_DEVICE constexpr bool isnan(M x) {
  return x != x;
}

/// +-inf; false for integers.
template <class M>
EMBER_HOST_DEVICE constexpr bool isinf(M x) {
  if constexpr (std::numeric_limits<M>::has_infinity)
    return x == std::numeric_limits<M>::infinity() || x == -std::numeric_limits<M>::infinity();
  else
    return false;
}

}  // namespace ember::math
