// The per-element updates of the fused SGD and Adam/AdamW steps, for the CPU's fused passes
// (core/cpu/sgd.cpp, core/cpu/adam.cpp, on scalars and on AVX2 registers) and the CUDA
// multi-tensor kernels (cuda/optim.cu): one sequence of operations each, so the two devices
// round every step alike. It lives in core/ because cuda/ may include core/ but not optim/
// (scripts/check_layers.sh).
//
// The element type V is a scalar of the compute type M or a SIMD register of them; `ops`
// supplies the arithmetic on V (set, mul, div, add, fma, sqrt, maximum). RoundedOps is the
// scalar one both devices use.
#pragma once

#include "ember/core/host_device.h"
#include "ember/core/math.h"

namespace ember {

/// The scalars of one fused Adam step, converted to the compute type M as the tensor ops
/// convert them (each double to M once): decay = 1 - lr decoupled_decay (AdamW), l2 (Adam's
/// weight decay), b1 and a1 = 1 - b1, b2 and a2 = 1 - b2, the sqrt of the second bias
/// correction, eps, and -step_size = -lr / bias_correction1.
template <class M>
struct AdamScalars {
  M decay, l2, b1, a1, b2, a2, bc2_sqrt, eps, neg_step_size;
};

#if defined(__CUDA_ARCH__)
#define EMBER_ROUNDED(device, host) return device
#else
#define EMBER_ROUNDED(device, host) return host
#endif

/// Scalar arithmetic with every product, quotient, sum and square root rounded on its own and
/// an FMA exactly where adam_element and sgd_element have one: on the device the _rn intrinsics
/// keep nvcc from contracting; on the host no product of theirs feeds a plain sum that the
/// compiler could contract (each feeds an explicit fma, a quotient or a store).
struct RoundedOps {
  template <class M>
  EMBER_HOST_DEVICE static M set(M x) {
    return x;
  }
  EMBER_HOST_DEVICE static float mul(float a, float b) { EMBER_ROUNDED(__fmul_rn(a, b), a * b); }
  EMBER_HOST_DEVICE static double mul(double a, double b) { EMBER_ROUNDED(__dmul_rn(a, b), a * b); }
  EMBER_HOST_DEVICE static float div(float a, float b) { EMBER_ROUNDED(__fdiv_rn(a, b), a / b); }
  EMBER_HOST_DEVICE static double div(double a, double b) { EMBER_ROUNDED(__ddiv_rn(a, b), a / b); }
  EMBER_HOST_DEVICE static float add(float a, float b) { EMBER_ROUNDED(__fadd_rn(a, b), a + b); }
  EMBER_HOST_DEVICE static double add(double a, double b) { EMBER_ROUNDED(__dadd_rn(a, b), a + b); }
  EMBER_HOST_DEVICE static float sqrt(float a) { EMBER_ROUNDED(__fsqrt_rn(a), math::sqrt(a)); }
  EMBER_HOST_DEVICE static double sqrt(double a) { EMBER_ROUNDED(__dsqrt_rn(a), math::sqrt(a)); }
  template <class M>
  EMBER_HOST_DEVICE static M fma(M a, M b, M c) {
    return math::fma(a, b, c);
  }
  /// max with NaN winning: a where a is NaN or a > b, else b (torch.maximum's rule).
  template <class M>
  EMBER_HOST_DEVICE static M maximum(M a, M b) {
    return (a != a || a > b) ? a : b;
  }
};

#undef EMBER_ROUNDED

/// One element (or one register of elements) of the Adam/AdamW step: PyTorch's
/// _single_tensor_adam in its order, each operation rounded to M as the tensor ops round it.
/// The ops' `a + alpha b` loops are FMAs, so the same products are FMAs here:
///   p = p decay (AdamW);  g = fma(l2, p, g) (Adam's L2);
///   m = fma(1 - b1, g, m b1);  v = fma((1 - b2) g, g, v b2);  (amsgrad: vmax = max(vmax, v))
///   p = fma(-step_size, m / (sqrt(v or vmax) / bc2_sqrt + eps), p)  (addcdiv's a + v (b / c)).
template <bool Decay, bool L2, bool Ams, class V, class M, class Ops>
EMBER_HOST_DEVICE inline void adam_element(V& p, V g, V& m, V& v, V& vmax, const AdamScalars<M>& k,
                                           const Ops& ops) {
  if constexpr (Decay) p = ops.mul(p, ops.set(k.decay));
  if constexpr (L2) g = ops.fma(ops.set(k.l2), p, g);
  m = ops.fma(ops.set(k.a1), g, ops.mul(m, ops.set(k.b1)));
  v = ops.fma(ops.mul(ops.set(k.a2), g), g, ops.mul(v, ops.set(k.b2)));
  V den;
  if constexpr (Ams) {
    vmax = ops.maximum(vmax, v);
    den = ops.add(ops.div(ops.sqrt(vmax), ops.set(k.bc2_sqrt)), ops.set(k.eps));
  } else {
    den = ops.add(ops.div(ops.sqrt(v), ops.set(k.bc2_sqrt)), ops.set(k.eps));
  }
  p = ops.fma(ops.set(k.neg_step_size), ops.div(m, den), p);
}

/// The scalars of one SGD step, converted to the compute type M as the tensor ops convert them
/// (each double to M once): weight_decay, momentum, 1 - dampening and -lr; and the options
/// that pick the operations, the same for every element of a step.
template <class M>
struct SgdScalars {
  M weight_decay, momentum, one_minus_dampening, neg_lr;
  bool has_weight_decay, nesterov;
};

/// One element (or one register of elements) of the SGD step: PyTorch's _single_tensor_sgd in
/// its order, each operation rounded to M as optim/sgd.cpp's tensor ops round it, their
/// `a + alpha b` as FMAs (as in adam_element):
///   d = fma(weight_decay, p, g) (weight decay; skipped when it is 0, so an inf parameter does
///   not turn the gradient into NaN);  with Momentum: buf = d on the parameter's first step
///   (the buffer starts as the gradient, undamped; its old contents are not read), else
///   buf = fma(1 - dampening, d, buf momentum);  d = nesterov ? fma(momentum, buf, d) : buf;
///   p = fma(-lr, d, p).
template <bool Momentum, class V, class M, class Ops>
EMBER_HOST_DEVICE inline void sgd_element(V& p, V g, V& buf, bool first_step, const SgdScalars<M>& k,
                                          const Ops& ops) {
  if (k.has_weight_decay) g = ops.fma(ops.set(k.weight_decay), p, g);
  if constexpr (Momentum) {
    buf = first_step ? g : ops.fma(ops.set(k.one_minus_dampening), g, ops.mul(buf, ops.set(k.momentum)));
    g = k.nesterov ? ops.fma(ops.set(k.momentum), buf, g) : buf;
  }
  p = ops.fma(ops.set(k.neg_lr), g, p);
}

}  // namespace ember
