// The arithmetic of the CUDA softmax kernels (cuda/softmax.cu) that is more than a formula:
// the running (max, sum of exp) pair the block and strided kernels fold, and the output of an
// element from it (by the CPU's formulas, core/ops/softmax_math.h). Host-and-device code
// without CUDA headers, so the CPU tests (tests/core/test_cuda_softmax_plan.cpp) fold the same
// pairs in the kernels' orders and compare with the CPU softmax, special values included.
//
// The CPU takes max = max(x) ignoring NaN, then sum = sum(exp(x - max)), so a row holding a
// NaN or +inf, or only -inf, gets a NaN sum and comes out NaN, and -inf elements of other
// rows give exp(-inf) = 0. The running pair reaches the same: elements fold in as (x, 1);
// merging rescales each sum by exp(m_i - m), taken as exactly 1 when m_i == m (so -inf and
// +inf maxima do not make exp(inf - inf) = NaN on their own), and a final max of +inf makes
// the sum NaN, as the CPU's exp(inf - inf) term does.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "ember/core/host_device.h"
#include "ember/core/math.h"
#include "ember/core/ops/softmax_math.h"

namespace ember::cuda::softmax_math {

/// max ignoring NaN, as the CPU's std::max(max, x) (a NaN still reaches the sum).
template <class M>
EMBER_HOST_DEVICE inline M max_of(M a, M b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<M, float>) return fmaxf(a, b);
  else return fmax(a, b);
#else
  return std::fmax(a, b);
#endif
}

/// a * b + c * d rounded as written (never one fused multiply-add), so that it is
/// commutative in its two products bitwise: the lanes of a shuffle butterfly, which merge the
/// same two values from either side, then agree on every result.
template <class M>
EMBER_HOST_DEVICE inline M add_products(M a, M b, M c, M d) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<M, float>) return __fadd_rn(__fmul_rn(a, b), __fmul_rn(c, d));
  else return __dadd_rn(__dmul_rn(a, b), __dmul_rn(c, d));
#else
  // Host (the CPU tests): volatile keeps the compiler from contracting into an fma.
  volatile M x = a * b, y = c * d;
  return x + y;
#endif
}

template <class M>
EMBER_HOST_DEVICE inline M neg_inf() {
  return -std::numeric_limits<M>::infinity();
}

/// A running max and the sum of exp(x - m) over the elements folded so far. The empty pair
/// is {-inf, 0}.
template <class M>
struct MaxSum {
  M m;
  M s;
};

/// e^(from - to), the factor that moves a sum taken around max `from` to max `to`; exactly 1
/// when they are equal.
template <class M>
EMBER_HOST_DEVICE inline M rescale(M from, M to) {
  return from == to ? M(1) : math::exp(from - to);
}

/// Merges two pairs (commutative bitwise).
struct MaxSumOp {
  template <class M>
  EMBER_HOST_DEVICE MaxSum<M> operator()(const MaxSum<M>& a, const MaxSum<M>& b) const {
    M m = max_of(a.m, b.m);
    return {m, add_products(a.s, rescale(a.m, m), b.s, rescale(b.m, m))};
  }
};

/// Folds element v into the pair.
template <class M>
EMBER_HOST_DEVICE inline MaxSum<M> fold(const MaxSum<M>& st, M v) {
  return MaxSumOp{}(st, MaxSum<M>{v, M(1)});
}

/// The sum the CPU would have: NaN when the max is +inf (its exp(inf - inf) term).
template <class M>
EMBER_HOST_DEVICE inline M final_sum(const MaxSum<M>& st) {
  return st.m == std::numeric_limits<M>::infinity() ? std::numeric_limits<M>::quiet_NaN() : st.s;
}

/// softmax or log_softmax of element v of a row with max m and sum s: the CPU's formula
/// (core/ops/softmax_math.h), with the C library's exp.
template <bool Log, class M>
EMBER_HOST_DEVICE inline M softmax_out(M v, M m, M s) {
  return SoftmaxFn<Log>::apply(v, m, s);
}

}  // namespace ember::cuda::softmax_math
