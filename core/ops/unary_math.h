// The per-element formulas of the one-input math ops (core/ops/unary.cpp): one functor per op,
// compiled by the host compiler for the CPU loops and by nvcc for the CUDA kernels
// (cuda/unary_math.cu, cuda/unary_numeric.cu), so the CPU tests check the math a GPU runs.
//
// A functor is called with the compute type M of the element: float for float16/bfloat16, the
// type itself otherwise (opmath_t), and returns an M that the loop stores back. Its kDomain says
// which dtypes the op has a kernel for (map_domain.h); the op raises PyTorch's error for the
// others before any loop runs.
#pragma once

#include <type_traits>

#include "ember/core/math.h"
#include "ember/core/ops/int_math.h"
#include "ember/core/ops/map_domain.h"

namespace ember {

// ---- sign-like ------------------------------------------------------------------------------

/// -x; integers wrap at their ends (-(-128) is -128 in int8), as PyTorch.
struct NegFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>) return int_math::wrap_neg(v);
    else return -v;
  }
};

/// |x|; unsigned values are their own; the most negative integer stays itself (wraps).
struct AbsFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_unsigned_v<M>) return v;
    else if constexpr (std::is_integral_v<M>) return v < 0 ? int_math::wrap_neg(v) : v;
    else return math::fabs(v);
  }
};

/// -1, 0 or 1 (0 for nan, as PyTorch); bool is its own sign.
struct SignFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_same_v<M, bool>) return v;
    else if constexpr (std::is_unsigned_v<M>) return static_cast<M>(v > 0);
    else return static_cast<M>((M(0) < v) - (v < M(0)));
  }
};

/// x * x (square is pow(x, 2)); integers wrap.
struct SquareFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>) return int_math::wrap_mul(v, v);
    else return v * v;
  }
};

// ---- exponentials, logarithms, roots ----------------------------------------------------------

struct ExpFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::exp(v); }
};
struct Exp2Fn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::exp2(v); }
};
struct Expm1Fn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::expm1(v); }
};
struct LogFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::log(v); }
};
struct Log2Fn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::log2(v); }
};
struct Log10Fn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::log10(v); }
};
struct Log1pFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::log1p(v); }
};
struct SqrtFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::sqrt(v); }
};
/// 1 / sqrt(x), correctly rounded twice: not CUDA's rsqrtf, whose error is 2 ulp.
struct RsqrtFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return M(1) / math::sqrt(v); }
};
struct ReciprocalFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return M(1) / v; }
};

// ---- trigonometric, hyperbolic, sigmoid, erf ---------------------------------------------------

struct SinFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::sin(v); }
};
struct CosFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::cos(v); }
};
struct TanFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::tan(v); }
};
struct AsinFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::asin(v); }
};
struct AcosFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::acos(v); }
};
struct AtanFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::atan(v); }
};
struct SinhFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::sinh(v); }
};
struct CoshFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::cosh(v); }
};
struct TanhFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::tanh(v); }
};
struct AsinhFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::asinh(v); }
};
/// nan below 1 (the C function's domain, as torch.acosh).
struct AcoshFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::acosh(v); }
};
/// +-inf at +-1, nan outside [-1, 1].
struct AtanhFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::atanh(v); }
};
/// 1 / (1 + e^-x): saturates to 0 and 1 without nan at +-inf.
struct SigmoidFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return M(1) / (M(1) + math::exp(-v)); }
};
struct ErfFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::erf(v); }
};
struct ErfcFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return math::erfc(v); }
};

// ---- rounding -------------------------------------------------------------------------------------

/// floor, ceil, round (halves to even, as PyTorch) and trunc; integers are whole already.
struct FloorFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>) return v;
    else return math::floor(v);
  }
};
struct CeilFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>) return v;
    else return math::ceil(v);
  }
};
struct RoundFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>) return v;
    else return math::nearbyint(v);
  }
};
struct TruncFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_integral_v<M>) return v;
    else return math::trunc(v);
  }
};

/// round(x, decimals): PyTorch scales by 10^|decimals|, rounds half to even and scales back,
/// dividing first for negative decimals; all in M.
struct RoundDecimalsFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double ten_pow;  // 10^|decimals|
  bool negative;   // decimals < 0
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    M p = static_cast<M>(ten_pow);
    return negative ? math::nearbyint(v / p) * p : math::nearbyint(v * p) / p;
  }
};

/// x - trunc(x): keeps the sign of x.
struct FracFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M> EMBER_HOST_DEVICE M operator()(M v) const { return v - math::trunc(v); }
};

// ---- nan_to_num, logical_not ------------------------------------------------------------------------

/// nan -> nan_v, +inf -> pos_v, -inf -> neg_v. The op passes values already rounded to the
/// output dtype, so storing them back is exact and both devices write the same bits.
struct NanToNumFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double nan_v, pos_v, neg_v;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if (math::isnan(v)) return static_cast<M>(nan_v);
    if (math::isinf(v)) return static_cast<M>(v > 0 ? pos_v : neg_v);
    return v;
  }
};

/// x == 0 in x's compute type (logical_not): the loop stores it as bool, or as 1/0 in place.
struct IsZeroFn {
  static constexpr MapDomain kDomain = MapDomain::kAll;
  template <class M>
  EMBER_HOST_DEVICE bool operator()(M v) const {
    return v == M(0);
  }
};

}  // namespace ember
