// Integer arithmetic that wraps at the ends of its type, as PyTorch's integer kernels do (add,
// mul, neg of the most negative value), written without the undefined behaviour of signed
// overflow: the operation runs in an unsigned type of at least 32 bits and is converted back
// (two's complement since C++20). Host and device, for the functors of core/ops/*_math.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/core/host_device.h"

namespace ember::int_math {

/// An integer compute type other than bool (bool arithmetic goes through int and back).
template <class M>
constexpr bool is_int_v = std::is_integral_v<M> && !std::is_same_v<M, bool>;

/// The unsigned type integer arithmetic wraps in; at least 32 bits, since a uint16 product
/// would promote to int and overflow.
template <class M>
using wrap_t = std::conditional_t<sizeof(M) <= 4, uint32_t, uint64_t>;

template <class M>
EMBER_HOST_DEVICE M wrap_add(M a, M b) {
  return static_cast<M>(static_cast<wrap_t<M>>(a) + static_cast<wrap_t<M>>(b));
}
template <class M>
EMBER_HOST_DEVICE M wrap_sub(M a, M b) {
  return static_cast<M>(static_cast<wrap_t<M>>(a) - static_cast<wrap_t<M>>(b));
}
template <class M>
EMBER_HOST_DEVICE M wrap_mul(M a, M b) {
  return static_cast<M>(static_cast<wrap_t<M>>(a) * static_cast<wrap_t<M>>(b));
}
/// -a; the most negative value is its own negation.
template <class M>
EMBER_HOST_DEVICE M wrap_neg(M a) {
  return wrap_sub(M(0), a);
}

}  // namespace ember::int_math
