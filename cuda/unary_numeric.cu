// The maps of cuda::unary that keep their dtype's kind: neg, abs, square, sign, rounding, frac,
// nan_to_num; and logical_not. Formulas as the CPU's in core/ops/unary.cpp: integers are
// computed in their own type (so neg and abs wrap at the type's ends as on the CPU), floats
// in opmath_t.
#include <cuda_runtime.h>

#include <cuda/std/cmath>
#include <type_traits>

#include "ember/core/tensor.h"
#include "ember/cuda/device.h"
#include "ember/cuda/unary.cuh"

namespace ember::cuda {
namespace {

struct NegFn {
  template <class M>
  __device__ M operator()(M v) const {
    return static_cast<M>(-v);
  }
};

struct AbsFn {
  template <class M>
  __device__ M operator()(M v) const {
    if constexpr (std::is_unsigned_v<M>) return v;
    else if constexpr (std::is_integral_v<M>) return static_cast<M>(v < 0 ? -v : v);
    else return ::fabs(v);
  }
};

struct SquareFn {
  template <class M>
  __device__ M operator()(M v) const {
    return static_cast<M>(v * v);
  }
};

/// -1, 0 or 1 (0 for nan); bool is its own sign.
struct SignFn {
  template <class M>
  __device__ M operator()(M v) const {
    if constexpr (std::is_same_v<M, bool>) return v;
    else if constexpr (std::is_unsigned_v<M>) return static_cast<M>(v > 0);
    else return static_cast<M>((M(0) < v) - (v < M(0)));
  }
};

/// floor, ceil, round (half to even), trunc of a float or double.
template <UnaryFn Fn>
struct RoundFn {
  template <class M>
  __device__ M operator()(M v) const {
    if constexpr (Fn == UnaryFn::kFloor) return ::floor(v);
    else if constexpr (Fn == UnaryFn::kCeil) return ::ceil(v);
    else if constexpr (Fn == UnaryFn::kRound) return ::nearbyint(v);
    else return ::trunc(v);
  }
};

/// round(x, decimals): scale by 10^|decimals|, round half to even, scale back (dividing first
/// for negative decimals), all in M as on the CPU.
struct RoundDecimalsFn {
  double ten_pow;
  bool negative;
  template <class M>
  __device__ M operator()(M v) const {
    M p = static_cast<M>(ten_pow);
    return negative ? ::nearbyint(v / p) * p : ::nearbyint(v * p) / p;
  }
};

struct FracFn {
  template <class M>
  __device__ M operator()(M v) const {
    return v - ::trunc(v);
  }
};

/// nan -> nan_v, +inf -> pos_v, -inf -> neg_v; the values are already representable in the
/// output dtype (the op resolved them), so converting back is exact.
struct NanToNumFn {
  double nan_v, pos_v, neg_v;
  template <class M>
  __device__ M operator()(M v) const {
    if (::cuda::std::isnan(v)) return static_cast<M>(nan_v);
    if (::cuda::std::isinf(v)) return static_cast<M>(v > 0 ? pos_v : neg_v);
    return v;
  }
};

/// x == 0, read in x's compute type; the output (bool, or x's dtype) receives 1 or 0.
struct IsZeroFn {
  template <class M>
  __device__ bool operator()(M v) const {
    return v == M(0);
  }
};

}  // namespace

bool unary_numeric_map(UnaryFn fn, const TensorIter& iter, ScalarType t, const UnaryArgs& args) {
  using enum UnaryFn;
  switch (fn) {
    case kNeg: numeric_map(iter, t, NegFn{}); return true;
    case kAbs: numeric_map(iter, t, AbsFn{}); return true;
    case kSquare: numeric_map(iter, t, SquareFn{}); return true;
    case kSign: visit_dtype(t, [&]<typename T>() { gpu_map<T, T>(iter, SignFn{}); }); return true;
    // Integer rounding was turned into a copy by cuda::unary.
    case kFloor: float_map(iter, t, RoundFn<kFloor>{}); return true;
    case kCeil: float_map(iter, t, RoundFn<kCeil>{}); return true;
    case kRound: float_map(iter, t, RoundFn<kRound>{}); return true;
    case kTrunc: float_map(iter, t, RoundFn<kTrunc>{}); return true;
    case kRoundDecimals: float_map(iter, t, RoundDecimalsFn{args.a, args.b != 0}); return true;
    case kFrac: float_map(iter, t, FracFn{}); return true;
    case kNanToNum: float_map(iter, t, NanToNumFn{args.a, args.b, args.c}); return true;
    default: return false;
  }
}

void logical_not(const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  EMBER_CHECK(out.dtype() == kBool || out.dtype() == x.dtype(), "internal error: cuda::logical_not got ",
              x.dtype(), " input for ", out.dtype(), " output");
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_dtype(x.dtype(), [&]<typename T>() {
    if (out.dtype() == kBool) gpu_map<bool, T>(iter, IsZeroFn{});
    else gpu_map<T, T>(iter, IsZeroFn{});
  });
}

}  // namespace ember::cuda
