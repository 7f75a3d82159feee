// cuda::unary_map for the activations (relu, hardtanh, leaky_relu, elu, gelu, silu, mish,
// softplus, threshold, hardshrink, softshrink, log_sigmoid), clamp, and the masks and selects
// that piecewise gradients are built from (core/ops/unary_internal.h). The formulas are the
// CPU's: the functors of core/ops/activation_math.h and the tests of core/ops/value_test.h.
#include <cuda_runtime.h>

#include "ember/cuda/unary.cuh"

EMBER_CUDA_ACTIVATION_MAPS(EMBER_CUDA_INSTANTIATE_UNARY_MAP)

namespace ember::cuda {
namespace {

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
