// pow (tensor exponent and scalar exponent) and atan2 on CUDA, with the CPU's formulas
// (core/ops/binary.cpp): integer powers by squaring with wrap-around, and for a scalar
// exponent the same exact special cases (x * x for 2, sqrt for 0.5, ...) so that both devices
// round alike.
#include "ember/cuda/binary_kernels.cuh"
#include "ember/cuda/device.h"

namespace ember::cuda {

using namespace binary_kernels;

namespace {

template <class M>
struct PowFn {
  __device__ M operator()(M a, M b) const {
    if constexpr (is_int_v<M>)
      return int_pow(a, static_cast<int64_t>(b));
    else
      return m_pow(a, b);
  }
};

template <class M>
struct Atan2Fn {
  __device__ M operator()(M a, M b) const { return m_atan2(a, b); }
};

/// The formulas of a floating power with a scalar exponent, picked on the host.
enum class PowCase { kSqrt, kSquare, kCube, kRsqrt, kReciprocal, kInvSquare, kGeneral };

PowCase pow_case(double e) {
  if (e == 0.5) return PowCase::kSqrt;
  if (e == 2) return PowCase::kSquare;
  if (e == 3) return PowCase::kCube;
  if (e == -0.5) return PowCase::kRsqrt;
  if (e == -1) return PowCase::kReciprocal;
  if (e == -2) return PowCase::kInvSquare;
  return PowCase::kGeneral;
}

template <class M>
struct FloatPowScalarFn {
  PowCase pc;
  M e;
  __device__ M operator()(M v) const {
    switch (pc) {
      case PowCase::kSqrt:
        return m_sqrt(v);
      case PowCase::kSquare:
        return v * v;
      case PowCase::kCube:
        return v * v * v;
      case PowCase::kRsqrt:
        return M(1) / m_sqrt(v);
      case PowCase::kReciprocal:
        return M(1) / v;
      case PowCase::kInvSquare:
        return M(1) / (v * v);
      default:
        return m_pow(v, e);
    }
  }
};

template <class T>
struct IntPowScalarFn {
  int64_t e;
  __device__ T operator()(T v) const { return int_pow(v, e); }
};

}  // namespace

namespace binary_kernels {

void pow_atan2(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (fn == BinaryFn::kAtan2)
    visit_types<kFloats>(out.dtype(), "atan2_cuda",
                         [&]<typename T>() { map2<T>(a, b, out, Atan2Fn<opmath_t<T>>{}); });
  else
    visit_types<kInts | kFloats>(out.dtype(), "pow_cuda",
                                 [&]<typename T>() { map2<T>(a, b, out, PowFn<opmath_t<T>>{}); });
}

}  // namespace binary_kernels

void pow_scalar(const Tensor& x, const Tensor& out, const Scalar& exponent) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_types<kInts | kFloats>(out.dtype(), "pow_cuda", [&]<typename T>() {
    if constexpr (is_float_v<T>) {
      using M = opmath_t<T>;
      double e = exponent.toDouble();
      gpu_map<T, T>(iter, FloatPowScalarFn<M>{pow_case(e), static_cast<M>(e)});
    } else {
      gpu_map<T, T>(iter, IntPowScalarFn<T>{exponent.toLong()});
    }
  });
}

}  // namespace ember::cuda
