// Rounding division, remainder and fmod on CUDA (cuda/binary.h's kDivTrunc, kDivFloor,
// kRemainder, kFmod), with the CPU's formulas (core/ops/binary.cpp).
//
// Integer division by zero: the CPU kernels raise "ZeroDivisionError" after the loop. Here
// the element becomes 0 and nothing is raised: raising would need a host synchronization (and
// a device-to-host copy of a flag) in every integer division, which ops never do. PyTorch's
// CUDA kernels do not check either; they return whatever the hardware division gives.
#include "ember/cuda/binary_kernels.cuh"

namespace ember::cuda::binary_kernels {
namespace {

/// PyTorch's div_floor_floating: floor(a / b) from fmod, so that the quotient is exact where
/// a / b rounds across an integer; b == 0 gives the IEEE quotient.
template <class M>
__device__ __forceinline__ M div_floor_float(M a, M b) {
  if (b == 0) return a / b;
  M mod = m_fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= M(1);
  if (div == 0) return m_copysign(M(0), a / b);
  M floordiv = m_floor(div);
  if (div - floordiv > M(0.5)) floordiv += M(1);
  return floordiv;
}

template <class M>
__device__ __forceinline__ M float_remainder(M a, M b) {
  M mod = m_fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
  return mod;
}

/// One functor for the four ops (the choice is uniform over the launch, so the branch costs
/// nothing next to the memory traffic, and nvcc builds a quarter of the kernels).
template <class M>
struct DivisionFn {
  BinaryFn fn;
  __device__ M operator()(M a, M b) const {
    if constexpr (is_int_v<M>) {
      if (b == 0) return M(0);  // the CPU raises here; see the top of this file
      switch (fn) {
        case BinaryFn::kDivTrunc:
          return int_div_trunc(a, b);
        case BinaryFn::kDivFloor:
          return int_div_floor(a, b);
        case BinaryFn::kRemainder:
          return int_remainder(a, b);
        default:
          return int_fmod(a, b);
      }
    } else {
      switch (fn) {
        case BinaryFn::kDivTrunc:
          return m_trunc(a / b);
        case BinaryFn::kDivFloor:
          return div_floor_float(a, b);
        case BinaryFn::kRemainder:
          return float_remainder(a, b);
        default:
          return m_fmod(a, b);
      }
    }
  }
};

const char* kernel_name(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kDivTrunc:
      return "div_trunc_cuda";
    case BinaryFn::kDivFloor:
      return "div_floor_cuda";
    case BinaryFn::kRemainder:
      return "remainder_cuda";
    default:
      return "fmod_cuda";
  }
}

}  // namespace

void division(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out) {
  visit_types<kInts | kFloats>(out.dtype(), kernel_name(fn),
                               [&]<typename T>() { map2<T>(a, b, out, DivisionFn<opmath_t<T>>{fn}); });
}

}  // namespace ember::cuda::binary_kernels
