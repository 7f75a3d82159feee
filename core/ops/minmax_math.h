// The per-element rules of the value-selecting reductions (max/min/amax/amin, max/min over a
// dim, argmax/argmin; logsumexp's shift too): compiled by the host compiler for the CPU loops
// (core/ops/minmax.cpp, core/ops/reduce.cpp) and by nvcc for the CUDA kernels (cuda/minmax.cu,
// cuda/reduce_stats.cu), so the CPU tests check the rules a GPU runs.
//
// PyTorch's NaN rule: a NaN beats every number, and of equal extremes (or several NaNs) the
// first position is the one picked. M is the compute type of the element (opmath_t: float for
// float16/bfloat16, the type itself otherwise).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/core/host_device.h"

namespace ember {

/// The starting value of a max (min) reduction: nothing compares below (above) it, so it is
/// also the identity of pick_extreme (-inf for floats, the lowest integer for integers).
template <bool IsMax, class M>
EMBER_HOST_DEVICE constexpr M extreme_init() {
  if constexpr (std::is_floating_point_v<M>)
    return IsMax ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::infinity();
  else
    return IsMax ? std::numeric_limits<M>::lowest() : std::numeric_limits<M>::max();
}

/// Whether v replaces `best` as the running max (IsMax) or min. Strict, so ties keep the
/// earlier element; NaN beats every number and nothing beats NaN.
template <bool IsMax, class M>
EMBER_HOST_DEVICE constexpr bool beats(M v, M best) {
  if constexpr (std::is_floating_point_v<M>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  if constexpr (IsMax)
    return v > best;
  else
    return v < best;
}

/// The NaN-propagating max (min) of the running value a and v, for reductions that keep the
/// value only. A plain select (no branch on a's NaN: a NaN a stays because nothing compares
/// above it), so the CPU's interleaved lanes vectorize it.
template <bool IsMax, class M>
EMBER_HOST_DEVICE constexpr M pick_extreme(M a, M v) {
  if constexpr (IsMax)
    return (v != v || v > a) ? v : a;
  else
    return (v != v || v < a) ? v : a;
}

/// A max/min-with-position partial: the best value so far and its position (-1 before the
/// first element, which every value then beats).
template <class M>
struct ArgAcc {
  M value;
  int64_t index;
};

/// The fold of max/min over a dim and argmax/argmin. step takes elements in increasing
/// position within one partial; combine merges partials met in any order (the CUDA tree, the
/// CPU's interleaved lanes) and still picks the first of equal extremes by position.
template <bool IsMax, class M>
struct ArgExtreme {
  using Acc = ArgAcc<M>;
  EMBER_HOST_DEVICE static constexpr Acc init() { return {M(0), -1}; }
  EMBER_HOST_DEVICE static constexpr Acc step(Acc a, M v, int64_t pos) {
    return (a.index < 0 || beats<IsMax>(v, a.value)) ? Acc{v, pos} : a;
  }
  EMBER_HOST_DEVICE static constexpr Acc combine(Acc a, Acc b) {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    if (beats<IsMax>(b.value, a.value)) return b;
    if (beats<IsMax>(a.value, b.value)) return a;
    return b.index < a.index ? b : a;  // equal (or both NaN): the first position wins
  }
};

}  // namespace ember
