// The per-element formulas of the comparisons, isclose and the logical ops (core/ops/compare.cpp): one
// functor per op, compiled by the host compiler for the CPU loops and by nvcc for the CUDA
// kernels (cuda/compare.cu). Each is called with the compute type M of its operands (opmath_t:
// float for float16/bfloat16) and returns the bool stored in the output.
#pragma once

#include <type_traits>

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

/// The identity rounding of IsCloseFn (float32, float64 and the integer types).
struct NoRound {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v;
  }
};

/// isclose: a == b (so equal infinities are close), both NaN with equal_nan, or |a - b| within
/// atol + |rtol b| (and finite). Floats: PyTorch forms atol + |rtol b| and |a - b| as tensors of
/// the input dtype, so float16/bfloat16 round at those steps; `round` is that rounding, brought
/// by each device since their float16/bfloat16 conversions differ (core/half.h on the host,
/// CUDA's intrinsics in a kernel), and NoRound for the other dtypes. Integers and bool (as
/// 0/1): PyTorch's tolerance is a float, |a - b| is computed in the integer type, wrapping, and
/// compared as float.
template <class Round = NoRound>
struct IsCloseFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  double rtol, atol;
  bool equal_nan;
  Round round;
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
      M allowed = round(static_cast<M>(atol) + round(math::fabs(static_cast<M>(rtol) * b)));
      M actual = round(math::fabs(a - b));
      return !math::isnan(actual) && !math::isinf(actual) && actual <= allowed;
    }
  }
};

}  // namespace ember
