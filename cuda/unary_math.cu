// The floating-point math maps of cuda::unary (exp and log families, roots, trigonometric and
// hyperbolic functions, sigmoid, erf) and cuda::unary itself, which hands each map to the file
// holding its kernel. Formulas as the CPU's in core/ops/unary.cpp, with CUDA's math functions
// (::exp(float) is expf, ::exp(double) exp).
#include <cuda_runtime.h>

#include "ember/core/tensor.h"
#include "ember/cuda/copy.h"
#include "ember/cuda/device.h"
#include "ember/cuda/unary.cuh"

namespace ember::cuda {
namespace {

/// fn(v) for one of this file's maps; M is float or double.
template <UnaryFn Fn>
struct MathFn {
  template <class M>
  __device__ M operator()(M v) const {
    using enum UnaryFn;
    if constexpr (Fn == kExp) return ::exp(v);
    else if constexpr (Fn == kExp2) return ::exp2(v);
    else if constexpr (Fn == kExpm1) return ::expm1(v);
    else if constexpr (Fn == kLog) return ::log(v);
    else if constexpr (Fn == kLog2) return ::log2(v);
    else if constexpr (Fn == kLog10) return ::log10(v);
    else if constexpr (Fn == kLog1p) return ::log1p(v);
    else if constexpr (Fn == kSqrt) return ::sqrt(v);
    else if constexpr (Fn == kRsqrt) return M(1) / ::sqrt(v);  // as the CPU: not rsqrtf's 2 ulp
    else if constexpr (Fn == kReciprocal) return M(1) / v;
    else if constexpr (Fn == kSin) return ::sin(v);
    else if constexpr (Fn == kCos) return ::cos(v);
    else if constexpr (Fn == kTan) return ::tan(v);
    else if constexpr (Fn == kAsin) return ::asin(v);
    else if constexpr (Fn == kAcos) return ::acos(v);
    else if constexpr (Fn == kAtan) return ::atan(v);
    else if constexpr (Fn == kSinh) return ::sinh(v);
    else if constexpr (Fn == kCosh) return ::cosh(v);
    else if constexpr (Fn == kTanh) return ::tanh(v);
    else if constexpr (Fn == kSigmoid) return M(1) / (M(1) + ::exp(-v));
    else if constexpr (Fn == kErf) return ::erf(v);
    else return ::erfc(v);
  }
};

/// Runs MathFn<fn> when fn is one of Fns.
template <UnaryFn... Fns>
bool run_one_of(UnaryFn fn, const TensorIter& iter, ScalarType t) {
  return ((fn == Fns && (float_map(iter, t, MathFn<Fns>{}), true)) || ...);
}

bool is_rounding(UnaryFn fn) {
  return fn == UnaryFn::kFloor || fn == UnaryFn::kCeil || fn == UnaryFn::kRound || fn == UnaryFn::kTrunc;
}

}  // namespace

bool unary_math_map(UnaryFn fn, const TensorIter& iter, ScalarType t) {
  using enum UnaryFn;
  return run_one_of<kExp, kExp2, kExpm1, kLog, kLog2, kLog10, kLog1p, kSqrt, kRsqrt, kReciprocal, kSin,
                    kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kSigmoid, kErf, kErfc>(fn, iter, t);
}

void unary(UnaryFn fn, const Tensor& x, const Tensor& out, UnaryArgs args) {
  EMBER_CHECK(x.dtype() == out.dtype(), "internal error: cuda::unary got ", x.dtype(), " input for ", out.dtype(),
              " output");
  if (out.numel() == 0) return;
  // Integers are whole already: rounding them is a copy (none when done in place).
  if (is_rounding(fn) && !is_floating_point(x.dtype())) {
    copy(out, x);
    return;
  }
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  ScalarType t = out.dtype();
  bool done =
      unary_math_map(fn, iter, t) || unary_numeric_map(fn, iter, t, args) || activation_map(fn, iter, t, args);
  EMBER_CHECK(done, "internal error: cuda::unary has no kernel for map ", static_cast<int>(fn));
}

}  // namespace ember::cuda
