// The arithmetic kernels of cuda/binary.h (add, sub, mul, div, maximum/minimum, bitwise ops,
// lerp with a scalar weight) and binary(), which also hands division (division.cu) and
// pow/atan2 (pow.cu) on. Formulas are the CPU's (core/ops/binary.cpp), computed in opmath_t;
// integers wrap on overflow, as they do on the CPU in practice.
#include "ember/cuda/binary_kernels.cuh"
#include "ember/cuda/device.h"

namespace ember::cuda {

using namespace binary_kernels;

namespace {

// ---- functors (nvcc cannot define __device__ lambdas inside visit_dtype's generic lambda) ----

/// a + alpha * b; bool stays bool through int arithmetic, as on the CPU.
template <class M>
struct AddFn {
  M alpha;
  __device__ M operator()(M a, M b) const {
    if constexpr (is_int_v<M>)
      return wrap_add(a, wrap_mul(alpha, b));
    else
      return static_cast<M>(a + alpha * b);
  }
};

template <class M>
struct SubFn {
  M alpha;
  __device__ M operator()(M a, M b) const {
    if constexpr (is_int_v<M>)
      return wrap_sub(a, wrap_mul(alpha, b));
    else
      return static_cast<M>(a - alpha * b);
  }
};

template <class M>
struct MulFn {
  __device__ M operator()(M a, M b) const {
    if constexpr (std::is_same_v<M, bool>)
      return a && b;
    else if constexpr (is_int_v<M>)
      return wrap_mul(a, b);
    else
      return a * b;
  }
};

template <class M>
struct DivFn {
  __device__ M operator()(M a, M b) const { return a / b; }
};

/// std::max / std::min's choice (the first operand on ties, so max(-0, 0) is -0 as on the
/// CPU), with NaN from either operand propagated.
template <class M>
struct MaxMinFn {
  bool is_max;
  __device__ M operator()(M a, M b) const {
    if constexpr (is_float_v<M>)
      if (isnan(a) || isnan(b)) return std::numeric_limits<M>::quiet_NaN();
    if (is_max) return a < b ? b : a;
    return b < a ? b : a;
  }
};

template <class T>
struct BitwiseFn {
  BinaryFn fn;
  __device__ T operator()(T a, T b) const {
    switch (fn) {
      case BinaryFn::kBitwiseAnd:
        return static_cast<T>(a & b);
      case BinaryFn::kBitwiseOr:
        return static_cast<T>(a | b);
      default:
        return static_cast<T>(a ^ b);
    }
  }
};

/// PyTorch's lerp: from whichever end is nearer the weight, so lerp(a, b, 1) == b exactly.
template <class M>
__device__ __forceinline__ M lerp_value(M start, M end, M w) {
  return m_abs(w) < M(0.5) ? start + w * (end - start) : end - (end - start) * (M(1) - w);
}

template <class M>
struct LerpScalarFn {
  M w;
  __device__ M operator()(M a, M b) const { return lerp_value(a, b, w); }
};

/// a * s or a / s with s in opmath; the second operand is a itself and unused.
template <class M>
struct ScalarMulDivFn {
  M s;
  bool divide;
  __device__ M operator()(M a, M) const { return divide ? a / s : a * s; }
};

// ---- per-op dispatch --------------------------------------------------------------------------

void add_sub(bool add, const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha) {
  // Bool subtraction was refused by the op (sub_check); only add is built for bool.
  auto run = [&]<typename T>() {
    using M = opmath_t<T>;
    M al = static_cast<M>(alpha.toDouble());  // as the CPU kernel converts it
    if (add)
      map2<T>(a, b, out, AddFn<M>{al});
    else if constexpr (!std::is_same_v<T, bool>)
      map2<T>(a, b, out, SubFn<M>{al});
  };
  if (add)
    visit_types<kAllTypes>(out.dtype(), "add_cuda", run);
  else
    visit_types<kInts | kFloats>(out.dtype(), "sub_cuda", run);
}

void mul(const Tensor& a, const Tensor& b, const Tensor& out) {
  visit_types<kAllTypes>(out.dtype(), "mul_cuda",
                         [&]<typename T>() { map2<T>(a, b, out, MulFn<opmath_t<T>>{}); });
}

void true_div(const Tensor& a, const Tensor& b, const Tensor& out) {
  // The op computes in a floating dtype (integer inputs are promoted first).
  visit_types<kFloats>(out.dtype(), "div_true_cuda",
                       [&]<typename T>() { map2<T>(a, b, out, DivFn<opmath_t<T>>{}); });
}

void max_min(bool is_max, const Tensor& a, const Tensor& b, const Tensor& out) {
  visit_types<kAllTypes>(out.dtype(), is_max ? "maximum_cuda" : "minimum_cuda",
                         [&]<typename T>() { map2<T>(a, b, out, MaxMinFn<opmath_t<T>>{is_max}); });
}

void bitwise(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* kernel = fn == BinaryFn::kBitwiseAnd  ? "bitwise_and_cuda"
                       : fn == BinaryFn::kBitwiseOr ? "bitwise_or_cuda"
                                                    : "bitwise_xor_cuda";
  visit_types<kBools | kInts>(out.dtype(), kernel,
                              [&]<typename T>() { map2<T>(a, b, out, BitwiseFn<T>{fn}); });
}

void lerp_scalar(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& weight) {
  visit_types<kFloats>(out.dtype(), "lerp_cuda", [&]<typename T>() {
    using M = opmath_t<T>;
    map2<T>(a, b, out, LerpScalarFn<M>{static_cast<M>(weight.toDouble())});
  });
}

void scalar_mul_div(bool divide, const Tensor& a, const Tensor& out, const Scalar& s) {
  visit_types<kFloats>(out.dtype(), divide ? "div_true_cuda" : "mul_cuda", [&]<typename T>() {
    using M = opmath_t<T>;
    map2<T>(a, a, out, ScalarMulDivFn<M>{static_cast<M>(s.toDouble()), divide});
  });
}

}  // namespace

void binary(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  switch (fn) {
    case BinaryFn::kAdd:
      return add_sub(true, a, b, out, alpha);
    case BinaryFn::kSub:
      return add_sub(false, a, b, out, alpha);
    case BinaryFn::kMul:
      return mul(a, b, out);
    case BinaryFn::kDiv:
      return true_div(a, b, out);
    case BinaryFn::kDivTrunc:
    case BinaryFn::kDivFloor:
    case BinaryFn::kRemainder:
    case BinaryFn::kFmod:
      return division(fn, a, b, out);
    case BinaryFn::kPow:
    case BinaryFn::kAtan2:
      return pow_atan2(fn, a, b, out);
    case BinaryFn::kMaximum:
      return max_min(true, a, b, out);
    case BinaryFn::kMinimum:
      return max_min(false, a, b, out);
    case BinaryFn::kBitwiseAnd:
    case BinaryFn::kBitwiseOr:
    case BinaryFn::kBitwiseXor:
      return bitwise(fn, a, b, out);
    case BinaryFn::kLerp:
      return lerp_scalar(a, b, out, alpha);
    case BinaryFn::kMulScalar:
    case BinaryFn::kDivScalar:
      return scalar_mul_div(fn == BinaryFn::kDivScalar, a, out, alpha);
  }
}

}  // namespace ember::cuda
