// The per-element formulas of the elementwise ops of three operands (core/ops/ternary.cpp):
// where, masked_fill, lerp, addcmul, addcdiv. One functor per op, compiled by the host
// compiler for the CPU loops and by nvcc for the CUDA kernels (cuda/ternary.cu, and
// cuda/binary.cu for lerp with a scalar weight); called with the compute type M of the
// element (opmath_t), as the functors of binary_math.h.
#pragma once

#include <type_traits>

#include "ember/core/math.h"
#include "ember/core/ops/binary_math.h"
#include "ember/core/ops/map_domain.h"

namespace ember {

/// c ? a : b. Only moves elements, so any U of the element's size serves (the CUDA kernel
/// runs it on unsigned integers: 4 instances for 10 dtypes, every bit pattern kept).
struct WhereFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class U>
  EMBER_HOST_DEVICE U operator()(bool c, U a, U b) const {
    return c ? a : b;
  }
};

/// m ? v : x: masked_fill's value v where the mask holds, self x elsewhere (moves elements,
/// as WhereFn).
struct MaskedFillFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class U>
  EMBER_HOST_DEVICE U operator()(U x, bool m, U v) const {
    return m ? v : x;
  }
};

/// start + w (end - start), PyTorch's way: from whichever end is nearer the weight, which
/// keeps lerp(a, b, 1) == b exactly.
struct LerpFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M start, M end, M w) const {
    return math::fabs(w) < M(0.5) ? start + w * (end - start) : end - (end - start) * (M(1) - w);
  }
};

/// lerp with a scalar weight, converted to the compute type.
struct LerpScalarFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double weight;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M start, M end) const {
    return LerpFn{}(start, end, static_cast<M>(weight));
  }
};

/// a + value * b * c. value is the op's Scalar converted to the tensor's dtype first, as
/// PyTorch does (for float16/bfloat16 the op rounds ScalarParam::f through the dtype).
struct AddcmulFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  ScalarParam value;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b, M c) const {
    if constexpr (binary_math::is_int_v<M>)
      return binary_math::wrap_add(a, binary_math::wrap_mul(binary_math::wrap_mul(value.as<M>(), b), c));
    else
      return a + value.as<M>() * b * c;
  }
};

/// a + value * (b / c); integer operands were refused by the op (PyTorch's message).
struct AddcdivFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  ScalarParam value;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M a, M b, M c) const {
    return a + value.as<M>() * (b / c);
  }
};

}  // namespace ember
