// Comparisons, logical ops and isclose on CUDA (cuda/binary.h), with the CPU's formulas
// (core/ops/compare.cpp). All produce bool.
#include "ember/cuda/binary_kernels.cuh"
#include "ember/cuda/device.h"

namespace ember::cuda {

using namespace binary_kernels;

namespace {

/// a op b in opmath; one functor for the six comparisons (the choice is uniform over the
/// launch), so nvcc builds one kernel set per dtype instead of six.
template <class M>
struct CompareOpFn {
  CompareFn fn;
  __device__ bool operator()(M a, M b) const {
    switch (fn) {
      case CompareFn::kEq:
        return a == b;
      case CompareFn::kNe:
        return a != b;
      case CompareFn::kLt:
        return a < b;
      case CompareFn::kLe:
        return a <= b;
      case CompareFn::kGt:
        return a > b;
      default:
        return a >= b;
    }
  }
};

/// The logical ops on operands the op already cast to bool.
struct LogicalFn {
  CompareFn fn;
  __device__ bool operator()(bool a, bool b) const {
    switch (fn) {
      case CompareFn::kLogicalAnd:
        return a && b;
      case CompareFn::kLogicalOr:
        return a || b;
      default:
        return a != b;
    }
  }
};

/// v rounded to T and back: the CPU forms isclose's tolerance and difference as tensors of
/// dtype T, so float16/bfloat16 round at the same steps here.
template <class T>
__device__ __forceinline__ opmath_t<T> round_through(opmath_t<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    return __half2float(__float2half_rn(v));
  else if constexpr (std::is_same_v<T, BFloat16>)
    return __bfloat162float(__float2bfloat16_rn(v));
  else
    return v;
}

/// isclose of floating a, b: equal (so equal infinities are close), both NaN with
/// equal_nan, or |a - b| finite and within atol + |rtol b|.
template <class T>
struct FloatCloseFn {
  using M = opmath_t<T>;
  M rtol, atol;
  bool exact_only, equal_nan;
  __device__ bool operator()(M a, M b) const {
    if (a == b) return true;
    if (equal_nan && isnan(a) && isnan(b)) return true;
    if (exact_only) return false;
    M allowed = round_through<T>(atol + round_through<T>(m_abs(rtol * b)));
    M actual = round_through<T>(m_abs(a - b));
    return isfinite(actual) && actual <= allowed;
  }
};

/// isclose of integers and bools: |a - b| computed in T (wrapping) and compared in float
/// with a float tolerance, as PyTorch does.
template <class T>
struct IntegerCloseFn {
  float rtol, atol;
  bool exact_only;
  __device__ bool operator()(T x, T y) const {
    if (x == y) return true;
    if (exact_only) return false;
    float allowed = atol + fabsf(rtol * static_cast<float>(y));
    float actual;
    if constexpr (std::is_same_v<T, bool>) {
      actual = 1.0f;  // x != y
    } else {
      T d = wrap_sub(x, y);
      if constexpr (std::is_signed_v<T>)
        if (d < 0) d = wrap_neg(d);
      actual = static_cast<float>(d);
    }
    return actual <= allowed;
  }
};

}  // namespace

void compare(CompareFn fn, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b});
  if (fn == CompareFn::kLogicalAnd || fn == CompareFn::kLogicalOr || fn == CompareFn::kLogicalXor) {
    gpu_map<bool, bool, bool>(iter, LogicalFn{fn});
    return;
  }
  visit_dtype(a.dtype(), [&]<typename T>() { gpu_map<bool, T, T>(iter, CompareOpFn<opmath_t<T>>{fn}); });
}

void isclose(const Tensor& a, const Tensor& b, const Tensor& out, double rtol, double atol, bool equal_nan) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  TensorIter iter(out, {a, b});
  bool exact_only = rtol == 0 && atol == 0;
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (is_float_v<T>) {
      using M = opmath_t<T>;
      gpu_map<bool, T, T>(iter,
                          FloatCloseFn<T>{static_cast<M>(rtol), static_cast<M>(atol), exact_only, equal_nan});
    } else {
      gpu_map<bool, T, T>(iter,
                          IntegerCloseFn<T>{static_cast<float>(rtol), static_cast<float>(atol), exact_only});
    }
  });
}

}  // namespace ember::cuda
