// The per-element formulas of the activations and clamp (core/ops/activation.cpp): one functor
// per op, compiled by the host compiler for the CPU loops and by nvcc for the CUDA kernels
// (cuda/activation.cu). Conventions as in core/ops/unary_math.h: called with the compute type
// M (opmath_t), parameters held as the op holds them (doubles, cast to M per call, as PyTorch's
// kernels cast their Scalar arguments to the compute type).
#pragma once

#include <type_traits>

#include "ember/core/math.h"
#include "ember/core/ops/map_domain.h"

namespace ember {

namespace activation_constants {
inline constexpr double kSqrt1_2 = 0.707106781186547524401;      // 1/sqrt(2)
inline constexpr double kSqrt2OverPi = 0.797884560802865355879;  // sqrt(2/pi)
inline constexpr double kGeluTanhCoef = 0.044715;
}  // namespace activation_constants

/// max(a, b), or b when the bound b is nan (a's own nan propagates through the comparison):
/// clamp's float semantics.
template <class M>
EMBER_HOST_DEVICE M max_nan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (math::isnan(b)) return b;
  }
  return a < b ? b : a;
}
/// min(a, b), or b when b is nan.
template <class M>
EMBER_HOST_DEVICE M min_nan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (math::isnan(b)) return b;
  }
  return b < a ? b : a;
}

// ---- relu family ------------------------------------------------------------------------------

/// max(x, 0); nan stays nan (nan < 0 is false).
struct ReluFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    if constexpr (std::is_unsigned_v<M>) return v;
    else return v < M(0) ? M(0) : v;
  }
};

/// x for x > 0, slope * x otherwise.
struct LeakyReluFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double slope;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v > 0 ? v : v * static_cast<M>(slope);
  }
};

/// scale * x for x > 0, scale * alpha * (e^{input_scale x} - 1) otherwise (elu, selu, celu).
struct EluFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double alpha, scale, input_scale;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v > 0 ? static_cast<M>(scale) * v
                 : static_cast<M>(alpha * scale) * math::expm1(v * static_cast<M>(input_scale));
  }
};

/// min(max(x, lo), hi) in x's dtype, nan bounds propagating (hardtanh, relu6).
struct HardtanhFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  double lo, hi;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return min_nan(max_nan(v, static_cast<M>(lo)), static_cast<M>(hi));
  }
};

/// value where x <= threshold, else x (nan stays nan: nan <= t is false).
struct ThresholdFn {
  static constexpr MapDomain kDomain = MapDomain::kNumbers;
  double threshold, value;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v <= static_cast<M>(threshold) ? static_cast<M>(value) : v;
  }
};

/// 0 where -lambd <= x <= lambd, else x.
struct HardshrinkFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double lambd;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    M l = static_cast<M>(lambd);
    return (v >= -l && v <= l) ? M(0) : v;
  }
};

/// x - lambd above lambd, x + lambd below -lambd, else x * 0 (a signed zero; nan stays nan).
struct SoftshrinkFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double lambd;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    M l = static_cast<M>(lambd);
    return v > l ? v - l : (v < -l ? v + l : v * M(0));
  }
};

// ---- smooth activations ---------------------------------------------------------------------

/// x Phi(x) with Phi the normal CDF through erf: 0.5 x (1 + erf(x / sqrt 2)).
struct GeluFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return M(0.5) * v * (M(1) + math::erf(v * static_cast<M>(activation_constants::kSqrt1_2)));
  }
};

/// gelu's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct GeluTanhFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    using namespace activation_constants;
    M inner = static_cast<M>(kSqrt2OverPi) * (v + static_cast<M>(kGeluTanhCoef) * v * v * v);
    return M(0.5) * v * (M(1) + math::tanh(inner));
  }
};

/// x sigmoid(x), as x / (1 + e^-x).
struct SiluFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v / (M(1) + math::exp(-v));
  }
};

/// x tanh(softplus(x)), softplus as log1p(e^x).
struct MishFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return v * math::tanh(math::log1p(math::exp(v)));
  }
};

/// log(1 + e^{beta x}) / beta, or x itself where beta x > threshold (for stability).
struct SoftplusFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  double beta, threshold;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    M bv = v * static_cast<M>(beta);
    return bv > static_cast<M>(threshold) ? v : math::log1p(math::exp(bv)) / static_cast<M>(beta);
  }
};

/// log(sigmoid(x)) as min(x, 0) - log1p(e^{-|x|}): no overflow at either end.
struct LogSigmoidFn {
  static constexpr MapDomain kDomain = MapDomain::kFloating;
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v) const {
    return (v < M(0) ? v : M(0)) - math::log1p(math::exp(-math::fabs(v)));
  }
};

// ---- clamp ---------------------------------------------------------------------------------------

/// clamp with scalar bounds already in the compute type M (absent ones are the dtype's limits
/// or +-inf): nan if x or a bound is nan; lo > hi gives hi (PyTorch).
template <class M>
struct ClampFn {
  M lo, hi;
  EMBER_HOST_DEVICE M operator()(M v) const { return min_nan(max_nan(v, lo), hi); }
};

/// clamp with tensor bounds broadcast to x.
struct ClampTensorFn {
  template <class M>
  EMBER_HOST_DEVICE M operator()(M v, M lo, M hi) const {
    return min_nan(max_nan(v, lo), hi);
  }
};

}  // namespace ember
