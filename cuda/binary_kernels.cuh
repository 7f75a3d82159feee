// Shared by the .cu files of cuda/binary.h (internal to cuda/): a dtype visitor restricted to
// the dtypes a kernel is built for, device versions of the CPU's integer formulas (core/ops/
// binary.cpp: same results, wrapping instead of undefined behaviour), overloads of the C math
// functions for float and double, and the entry points binary.cu hands its cases on to.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ember/core/tensor.h"
#include "ember/cuda/binary.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda::binary_kernels {

// ---- dtype dispatch --------------------------------------------------------------------------

/// Categories of dtypes a kernel is instantiated for (bit flags).
enum TypeSet : unsigned { kBools = 1, kInts = 2, kFloats = 4, kAllTypes = 7 };

template <class T>
constexpr unsigned type_category = std::is_same_v<T, bool> ? kBools
                                   : is_float_v<T>         ? kFloats
                                                           : kInts;

/// visit_dtype limited to `Set`: kernels are instantiated only for those dtypes (nvcc is
/// slow); any other raises PyTorch's `"<kernel>" not implemented for '<dtype>'`.
template <unsigned Set, class F>
void visit_types(ScalarType t, const char* kernel, F&& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr ((Set & type_category<T>) != 0)
      f.template operator()<T>();
    else
      ember::detail::throw_error(
          ember::detail::str_cat("\"", kernel, "\" not implemented for '", scalar_type_name(t), "'"));
  });
}

/// Calls f.template operator()<U>() with U the unsigned integer of t's element size: for
/// kernels that only move elements (where, masked_fill), so that 4 instances serve 10 dtypes
/// and every bit pattern (NaN payloads included) is kept.
template <class F>
void visit_by_size(ScalarType t, F&& f) {
  switch (element_size(t)) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    default:
      return f.template operator()<uint64_t>();
  }
}

/// out = f(a, b) with a, b and out all of element type T.
template <class T, class F>
void map2(const Tensor& a, const Tensor& b, const Tensor& out, const F& f) {
  TensorIter iter(out, {a, b});
  gpu_map<T, T, T>(iter, f);
}

// ---- integer arithmetic ------------------------------------------------------------------------

/// Whether M is an integer type other than bool.
template <class M>
constexpr bool is_int_v = std::is_integral_v<M> && !std::is_same_v<M, bool>;

/// The unsigned type integer arithmetic wraps in (at least 32 bits: a uint16 product would
/// promote to int and overflow).
template <class M>
using wrap_t = std::conditional_t<sizeof(M) <= 4, uint32_t, uint64_t>;

template <class M>
__device__ __forceinline__ M wrap_add(M a, M b) {
  return static_cast<M>(static_cast<wrap_t<M>>(a) + static_cast<wrap_t<M>>(b));
}
template <class M>
__device__ __forceinline__ M wrap_sub(M a, M b) {
  return static_cast<M>(static_cast<wrap_t<M>>(a) - static_cast<wrap_t<M>>(b));
}
template <class M>
__device__ __forceinline__ M wrap_mul(M a, M b) {
  return static_cast<M>(static_cast<wrap_t<M>>(a) * static_cast<wrap_t<M>>(b));
}
template <class M>
__device__ __forceinline__ M wrap_neg(M a) {
  return wrap_sub(M(0), a);
}

// Rounding division, remainder and fmod of integers; b != 0 (the kernels check). b == -1 is
// a negation, so the most negative value wraps instead of overflowing.

template <class T>
__device__ __forceinline__ T int_div_trunc(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return wrap_neg(a);
  return static_cast<T>(a / b);
}

template <class T>
__device__ __forceinline__ T int_div_floor(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_neg(a);
    T q = static_cast<T>(a / b);
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  }
  return static_cast<T>(a / b);
}

/// Python's %: the result takes the divisor's sign.
template <class T>
__device__ __forceinline__ T int_remainder(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  }
  return static_cast<T>(a % b);
}

/// C's %: the result takes the dividend's sign.
template <class T>
__device__ __forceinline__ T int_fmod(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return 0;
  return static_cast<T>(a % b);
}

/// base^exp by squaring, wrapping on overflow; a negative exponent gives 1 for base 1, +-1
/// for base -1 and 0 otherwise (the CPU's int_pow).
template <class T>
__device__ __forceinline__ T int_pow(T base, int64_t exp) {
  if (exp < 0) {
    if constexpr (std::is_signed_v<T>)
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
    return base == 1 ? T(1) : T(0);
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

// ---- floating point math: float (also the opmath of Half and BFloat16) and double -----------

__device__ __forceinline__ float m_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float m_trunc(float a) { return truncf(a); }
__device__ __forceinline__ double m_trunc(double a) { return trunc(a); }
__device__ __forceinline__ float m_floor(float a) { return floorf(a); }
__device__ __forceinline__ double m_floor(double a) { return floor(a); }
__device__ __forceinline__ float m_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double m_copysign(double a, double b) { return copysign(a, b); }
__device__ __forceinline__ float m_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float m_sqrt(float a) { return sqrtf(a); }
__device__ __forceinline__ double m_sqrt(double a) { return sqrt(a); }
__device__ __forceinline__ float m_atan2(float a, float b) { return atan2f(a, b); }
__device__ __forceinline__ double m_atan2(double a, double b) { return atan2(a, b); }
__device__ __forceinline__ float m_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double m_abs(double a) { return fabs(a); }

// ---- the cases binary() hands on to other files ------------------------------------------------

/// kDivTrunc, kDivFloor, kRemainder, kFmod (division.cu).
void division(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out);
/// kPow and kAtan2 (pow.cu).
void pow_atan2(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace ember::cuda::binary_kernels
