// The row terms of softmax / log_softmax and of their input gradients: compiled by the host
// compiler for the CPU loops (core/ops/softmax.cpp) and by nvcc for the CUDA kernels
// (cuda/softmax.cu), so both devices finish a row with one formula. M is the compute type
// (opmath_t: float for float16/bfloat16).
//
// Every exponential is taken through an `exp` argument (math::exp by default): the CPU's row
// loops pass their vectorizable float exp (softmax.cpp's exp_float, about 1 ulp from expf),
// which is the one place where the devices may round differently.
#pragma once

#include "ember/core/host_device.h"
#include "ember/core/math.h"

namespace ember {

/// math::exp as a callable, the default `exp` of the terms below.
struct MathExp {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return math::exp(v);
  }
};

/// softmax (Log = false) and log_softmax of a row with max m and sum s = sum(exp(x - m)):
///   softmax      y = exp(v - m) * (1 / s)
///   log_softmax  y = v - (m + log s)
/// A row of only -inf has m = -inf, so both are NaN, as PyTorch.
template <bool Log>
struct SoftmaxFn {
  /// The row's constant: 1 / s for softmax, m + log s for log_softmax.
  template <class M>
  EMBER_HOST_DEVICE static M row_constant(M m, M s) {
    if constexpr (Log)
      return m + math::log(s);
    else
      return M(1) / s;
  }
  /// Element v's output from the row constant c; e = exp(v - m), which log_softmax ignores
  /// (loops that keep the exponentials pass them, the others compute them here).
  template <class M>
  EMBER_HOST_DEVICE static M out(M v, M e, M c) {
    if constexpr (Log)
      return v - c;
    else
      return e * c;
  }
  /// The output of element v from the row's max and sum, in one call.
  template <class M, class Exp = MathExp>
  EMBER_HOST_DEVICE static M apply(M v, M m, M s, Exp exp = {}) {
    if constexpr (Log)
      return out(v, M(0), row_constant(m, s));
    else
      return out(v, exp(v - m), row_constant(m, s));
  }
};

/// The input gradient of softmax (Log = false) and log_softmax from the output y and the
/// incoming gradient g of a row:
///   softmax      gx = y (g - s),       s = sum(g y)
///   log_softmax  gx = g - exp(y) s,    s = sum(g)
template <bool Log>
struct SoftmaxBackwardFn {
  /// Element (g, y)'s term of the row sum s.
  template <class M>
  EMBER_HOST_DEVICE static M row_term(M g, M y) {
    if constexpr (Log)
      return g;
    else
      return g * y;
  }
  template <class M, class Exp = MathExp>
  EMBER_HOST_DEVICE static M grad_in(M g, M y, M s, Exp exp = {}) {
    if constexpr (Log)
      return g - exp(y) * s;
    else
      return y * (g - s);
  }
};

}  // namespace ember
