// The activation maps of cuda::unary (relu, hardtanh, leaky_relu, elu, gelu, silu, mish,
// softplus), clamp, and the masks and selects that piecewise gradients are built from
// (core/ops/unary_internal.h). Formulas as the CPU's in core/ops/activation.cpp.
#include <cuda_runtime.h>

#include <type_traits>

#include "ember/core/tensor.h"
#include "ember/cuda/device.h"
#include "ember/cuda/unary.cuh"

namespace ember::cuda {
namespace {

constexpr double kSqrt1_2 = 0.707106781186547524401;      // 1/sqrt(2)
constexpr double kSqrt2OverPi = 0.797884560802865355879;  // sqrt(2/pi)
constexpr double kGeluTanhCoef = 0.044715;

/// max and min that return nan when the bound b is nan (x's nan propagates through the
/// comparisons), as the CPU's max_nan / min_nan.
template <class M>
__device__ M max_nan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (b != b) return b;
  }
  return a < b ? b : a;
}
template <class M>
__device__ M min_nan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (b != b) return b;
  }
  return b < a ? b : a;
}

struct ReluFn {
  template <class M>
  __device__ M operator()(M v) const {
    if constexpr (std::is_unsigned_v<M>) return v;
    else return v < M(0) ? M(0) : v;
  }
};

struct HardtanhFn {
  double lo, hi;
  template <class M>
  __device__ M operator()(M v) const {
    return min_nan(max_nan(v, static_cast<M>(lo)), static_cast<M>(hi));
  }
};

struct LeakyReluFn {
  double slope;
  template <class M>
  __device__ M operator()(M v) const {
    return v > 0 ? v : v * static_cast<M>(slope);
  }
};

struct EluFn {
  double alpha, scale, input_scale;
  template <class M>
  __device__ M operator()(M v) const {
    return v > 0 ? static_cast<M>(scale) * v
                 : static_cast<M>(alpha * scale) * ::expm1(v * static_cast<M>(input_scale));
  }
};

/// x Phi(x), Phi the normal CDF through erf.
struct GeluFn {
  template <class M>
  __device__ M operator()(M v) const {
    return M(0.5) * v * (M(1) + ::erf(v * static_cast<M>(kSqrt1_2)));
  }
};

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct GeluTanhFn {
  template <class M>
  __device__ M operator()(M v) const {
    M inner = static_cast<M>(kSqrt2OverPi) * (v + static_cast<M>(kGeluTanhCoef) * v * v * v);
    return M(0.5) * v * (M(1) + ::tanh(inner));
  }
};

struct SiluFn {
  template <class M>
  __device__ M operator()(M v) const {
    return v / (M(1) + ::exp(-v));
  }
};

struct MishFn {
  template <class M>
  __device__ M operator()(M v) const {
    return v * ::tanh(::log1p(::exp(v)));
  }
};

/// log(1 + e^{beta x}) / beta, or x where beta x > threshold.
struct SoftplusFn {
  double beta, threshold;
  template <class M>
  __device__ M operator()(M v) const {
    M bv = v * static_cast<M>(beta);
    return bv > static_cast<M>(threshold) ? v : ::log1p(::exp(bv)) / static_cast<M>(beta);
  }
};

/// Scalar bounds, already in the compute type M of the dtype.
template <class M>
struct ClampFn {
  M lo, hi;
  __device__ M operator()(M v) const { return min_nan(max_nan(v, lo), hi); }
};

struct ClampTensorFn {
  template <class M>
  __device__ M operator()(M v, M lo, M hi) const {
    return min_nan(max_nan(v, lo), hi);
  }
};

/// A ValueTest with its bounds in M (core/ops/value_test.h's evaluator, run on the device).
template <class M>
struct TestFn {
  TestKind kind;
  M a, b;
  bool negate;
  __device__ bool operator()(M v) const { return passes(kind, v, a, b) != negate; }
};

template <class M>
struct SelectFn {
  TestFn<M> test;
  M if_true, if_false;
  __device__ M operator()(M v) const { return test(v) ? if_true : if_false; }
};

template <class M>
TestFn<M> make_test(const ValueTest& t) {
  return TestFn<M>{t.kind, static_cast<M>(t.a), static_cast<M>(t.b), t.negate};
}

struct MaskedFn {
  template <class M>
  __device__ M operator()(M v, bool keep) const {
    return keep ? v : M(0);
  }
};

struct ClampGradMaskFn {
  ClampGradMask which;
  template <class M>
  __device__ bool operator()(M v, M lo, M hi) const {
    return clamp_grad_passes(which, v, lo, hi);
  }
};

}  // namespace

bool activation_map(UnaryFn fn, const TensorIter& iter, ScalarType t, const UnaryArgs& args) {
  using enum UnaryFn;
  switch (fn) {
    case kRelu: numeric_map(iter, t, ReluFn{}); return true;
    case kHardtanh: numeric_map(iter, t, HardtanhFn{args.a, args.b}); return true;
    case kLeakyRelu: float_map(iter, t, LeakyReluFn{args.a}); return true;
    case kElu: float_map(iter, t, EluFn{args.a, args.b, args.c}); return true;
    case kGelu: float_map(iter, t, GeluFn{}); return true;
    case kGeluTanh: float_map(iter, t, GeluTanhFn{}); return true;
    case kSilu: float_map(iter, t, SiluFn{}); return true;
    case kMish: float_map(iter, t, MishFn{}); return true;
    case kSoftplus: float_map(iter, t, SoftplusFn{args.a, args.b}); return true;
    default: return false;
  }
}

void clamp(const Tensor& x, const Scalar& min, const Scalar& max, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_dtype(out.dtype(), [&]<typename T>() {
    using M = opmath_t<T>;
    gpu_map<T, T>(iter, ClampFn<M>{min.to<M>(), max.to<M>()});
  });
}

void clamp(const Tensor& x, const Tensor& min, const Tensor& max, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x, min, max});
  visit_dtype(out.dtype(), [&]<typename T>() { gpu_map<T, T, T, T>(iter, ClampTensorFn{}); });
}

void value_test(const ValueTest& test, const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_float_dtype(x.dtype(), "cuda value_test", [&]<typename T>() {
    gpu_map<bool, T>(iter, make_test<opmath_t<T>>(test));
  });
}

void value_select(const ValueTest& test, double if_true, double if_false, const Tensor& x,
                  const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x});
  visit_float_dtype(x.dtype(), "cuda select", [&]<typename T>() {
    using M = opmath_t<T>;
    gpu_map<T, T>(iter, SelectFn<M>{make_test<M>(test), static_cast<M>(if_true), static_cast<M>(if_false)});
  });
}

void masked(const Tensor& t, const Tensor& mask, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {t, mask});
  visit_float_dtype(out.dtype(), "cuda masked", [&]<typename T>() { gpu_map<T, T, bool>(iter, MaskedFn{}); });
}

void clamp_grad_mask(ClampGradMask which, const Tensor& x, const Tensor& min, const Tensor& max,
                     const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {x, min, max});
  visit_float_dtype(x.dtype(), "cuda clamp_grad_mask", [&]<typename T>() {
    gpu_map<bool, T, T, T>(iter, ClampGradMaskFn{which});
  });
}

}  // namespace ember::cuda
