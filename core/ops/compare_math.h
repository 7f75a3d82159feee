// The per-element formulas of the comparisons, isclose and the logical ops (core/ops/compare.cpp): one
// functor per op, compiled by the host compiler for the CPU loops and by nvcc for the CUDA
// kernels (cuda/compare.cu). Each is called with the compute type M of its operands (opmath_t:
// float for float16/bfloat16) and returns the bool stored in the output.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ember/core/half.h"
#include "ember/core/host_device.h"
#include "ember/core/math.h"
#include "ember/core/ops/binary_math.h"
#include "ember/core/ops/map_domain.h"

namespace ember {

struct EqFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M> EMBER_HOST_DEVICE bool operator()(M a, M b) const { return a == b; }
};
struct NeFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M> EMBER_HOST_DEVICE bool operator()(M a, M b) const { return a != b; }
};
struct LtFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M> EMBER_HOST_DEVICE bool operator()(M a, M b) const { return a < b; }
};
struct LeFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M> EMBER_HOST_DEVICE bool operator()(M a, M b) const { return a <= b; }
};
struct GtFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M> EMBER_HOST_DEVICE bool operator()(M a, M b) const { return a > b; }
};
struct GeFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M> EMBER_HOST_DEVICE bool operator()(M a, M b) const { return a >= b; }
};

// The logical ops read operands the op has cast to bool (nonzero is true, NaN included), so
// they exist for bool alone.
struct LogicalAndFn {
  static constexpr MapDomain kDomain = MapDomain::kBool;
  EMBER_HOST_DEVICE bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOrFn {
  static constexpr MapDomain kDomain = MapDomain::kBool;
  EMBER_HOST_DEVICE bool operator()(bool a, bool b) const { return a || b; }
};
struct LogicalXorFn {
  static constexpr MapDomain kDomain = MapDomain::kBool;
  EMBER_HOST_DEVICE bool operator()(bool a, bool b) const { return a != b; }
};

namespace compare_math {

EMBER_HOST_DEVICE inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
EMBER_HOST_DEVICE inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/// v rounded to the nearest float16 (ties to even) and back: core/half.h's rounding and CUDA's
/// __float2half_rn, written once on bits so both devices run this one. NaN stays NaN.
EMBER_HOST_DEVICE inline float round_through_half(float v) {
  const uint32_t u = float_bits(v), sign = u & 0x80000000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return v;                                // NaN
  if (a >= 0x477ff000u) return bits_float(sign | 0x7f800000u);  // 65520 and up: inf
  if (a < 0x38800000u) {                                        // below 2^-14: subnormal
    // Multiples of 2^-24, the ulp of 0.5 in float: the sum rounds |v| to one, ties to even.
    const float r = (bits_float(a) + 0.5f) - 0.5f;
    return bits_float(sign | float_bits(r));
  }
  a += 0xfffu + ((a >> 13) & 1u);  // round the 13 dropped mantissa bits to nearest even
  return bits_float(sign | (a & ~0x1fffu));
}

/// v rounded to the nearest bfloat16 (ties to even) and back, as core/half.h and CUDA's
/// __float2bfloat16_rn round. NaN stays NaN.
EMBER_HOST_DEVICE inline float round_through_bfloat16(float v) {
  uint32_t u = float_bits(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return v;
  u += 0x7fffu + ((u >> 16) & 1u);
  return bits_float(u & 0xffff0000u);
}

}  // namespace compare_math

/// v rounded through the storage dtype T when T is float16 or bfloat16 (v is then a float);
/// v itself for every other T (and for T = void, no storage rounding).
template <class T, class M>
EMBER_HOST_DEVICE M round_to_storage(M v) {
  if constexpr (std::is_same_v<T, Half>)
    return compare_math::round_through_half(v);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return compare_math::round_through_bfloat16(v);
  else
    return v;
}

/// isclose of two elements of storage dtype T (void: no storage rounding): a == b (so equal
/// infinities are close), both NaN with equal_nan, or |a - b| within atol + |rtol b| (and
/// finite). Floats: PyTorch forms atol + |rtol b| and |a - b| as tensors of the input dtype, so
/// float16/bfloat16 round at those steps (round_to_storage, the same bits on both devices).
/// Integers and bool (as 0/1): PyTorch's tolerance is a float, |a - b| is computed in the
/// integer type, wrapping, and compared as float.
template <class T = void>
struct IsCloseFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  double rtol, atol;
  bool equal_nan;
  template <class M>
  EMBER_HOST_DEVICE bool operator()(M a, M b) const {
    if (a == b) return true;
    if (equal_nan && math::isnan(a) && math::isnan(b)) return true;
    if (rtol == 0 && atol == 0) return false;
    if constexpr (std::is_integral_v<M>) {
      float allowed = static_cast<float>(atol) + math::fabs(static_cast<float>(rtol) * static_cast<float>(b));
      float actual = 1.0f;  // bool: a != b
      if constexpr (binary_math::is_int_v<M>) {
        M d = binary_math::wrap_sub(a, b);
        if constexpr (std::is_signed_v<M>)
          if (d < 0) d = binary_math::wrap_neg(d);
        actual = static_cast<float>(d);
      }
      return actual <= allowed;
    } else {
      M allowed = round_to_storage<T>(static_cast<M>(atol) +
                                      round_to_storage<T>(math::fabs(static_cast<M>(rtol) * b)));
      M actual = round_to_storage<T>(math::fabs(a - b));
      return !math::isnan(actual) && !math::isinf(actual) && actual <= allowed;
    }
  }
};

}  // namespace ember
