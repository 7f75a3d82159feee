// Elementwise ops of three operands on CUDA (cuda/binary.h's TernaryFn): where, lerp with a
// tensor weight, addcmul, addcdiv and masked_fill, with the CPU's formulas (core/ops/
// ternary.cpp). where and masked_fill only move elements, so they run on unsigned integers of
// the element's size: 4 kernel sets for the 10 dtypes, every bit pattern kept.
#include "ember/cuda/binary_kernels.cuh"
#include "ember/cuda/device.h"

namespace ember::cuda {

using namespace binary_kernels;

namespace {

template <class U>
struct WhereFn {
  __device__ U operator()(bool c, U a, U b) const { return c ? a : b; }
};

/// The fill value is a broadcast (stride 0) operand: it lives on the device, and reading it
/// on the host would need a synchronization.
template <class U>
struct MaskedFillFn {
  __device__ U operator()(U x, bool m, U v) const { return m ? v : x; }
};

/// PyTorch's lerp: from whichever end is nearer the weight, so lerp(a, b, 1) == b exactly.
template <class M>
struct LerpFn {
  __device__ M operator()(M start, M end, M w) const {
    return m_abs(w) < M(0.5) ? start + w * (end - start) : end - (end - start) * (M(1) - w);
  }
};

template <class M>
struct AddcmulFn {
  M value;
  __device__ M operator()(M a, M b, M c) const {
    if constexpr (is_int_v<M>)
      return wrap_add(a, wrap_mul(wrap_mul(value, b), c));
    else
      return a + value * b * c;
  }
};

template <class M>
struct AddcdivFn {
  M value;
  __device__ M operator()(M a, M b, M c) const { return a + value * (b / c); }
};

void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  TensorIter iter(out, {cond, a, b});
  visit_by_size(out.dtype(), [&]<typename U>() { gpu_map<U, bool, U, U>(iter, WhereFn<U>{}); });
}

void masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out) {
  TensorIter iter(out, {self, mask, value});
  visit_by_size(out.dtype(), [&]<typename U>() { gpu_map<U, U, bool, U>(iter, MaskedFillFn<U>{}); });
}

void lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out) {
  TensorIter iter(out, {start, end, weight});
  visit_types<kFloats>(out.dtype(), "lerp_cuda",
                       [&]<typename T>() { gpu_map<T, T, T, T>(iter, LerpFn<opmath_t<T>>{}); });
}

void addcmul_addcdiv(bool is_div, const Tensor& self, const Tensor& t1, const Tensor& t2, const Tensor& out,
                     const Scalar& value) {
  TensorIter iter(out, {self, t1, t2});
  auto run = [&]<typename T>() {
    using M = opmath_t<T>;
    M v = static_cast<M>(value.to<T>());  // as the CPU: value converted to the tensor dtype first
    if constexpr (is_float_v<T>)
      if (is_div) return gpu_map<T, T, T, T>(iter, AddcdivFn<M>{v});
    gpu_map<T, T, T, T>(iter, AddcmulFn<M>{v});
  };
  // Integer addcdiv was refused by the op (check_addcdiv), so it is built for floats only.
  if (is_div)
    visit_types<kFloats>(out.dtype(), "addcdiv_cuda", run);
  else
    visit_types<kInts | kFloats>(out.dtype(), "addcmul_cuda", run);
}

}  // namespace

void ternary(TernaryFn fn, const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out,
             const Scalar& value) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  switch (fn) {
    case TernaryFn::kWhere:
      return where(a, b, c, out);
    case TernaryFn::kLerp:
      return lerp(a, b, c, out);
    case TernaryFn::kAddcmul:
      return addcmul_addcdiv(false, a, b, c, out, value);
    case TernaryFn::kAddcdiv:
      return addcmul_addcdiv(true, a, b, c, out, value);
    case TernaryFn::kMaskedFill:
      return masked_fill(a, b, c, out);
  }
}

}  // namespace ember::cuda
