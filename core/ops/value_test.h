// ValueTest: the elementwise tests of one floating value behind isnan/isinf/isfinite and the
// gradient masks of piecewise ops (relu, clamp, softplus, ...). Plain data plus constexpr
// evaluators, so that the CPU loops (core/ops/unary.cpp) and the CUDA kernels
// (cuda/activation.cu, which call constexpr functions on the device) compute the same test.
// Internal to core/ops and cuda/.
#pragma once

#include <cstdint>
#include <limits>

namespace ember {

enum class TestKind : uint8_t {
  kIsNan,
  kIsInf,
  kIsFinite,
  kLessEqual,      // v <= a
  kGreater,        // v > a
  kScaledGreater,  // v * a > b, rounded in the compute type (softplus's linear region)
  kInClosed,       // a <= v <= b
  kOutsideOpen,    // v <= a || v >= b
};

/// One test and its bounds; `negate` takes the complement (nan included: !(v <= 0) holds
/// for nan, v > 0 does not, and relu's and leaky_relu's gradients differ exactly there).
struct ValueTest {
  TestKind kind;
  double a = 0;
  double b = 0;
  bool negate = false;
};

/// Test K of v, with bounds a and b already in v's compute type M (float or double).
template <TestKind K, class M>
constexpr bool passes(M v, M a, M b) {
  constexpr M kInf = std::numeric_limits<M>::infinity();
  if constexpr (K == TestKind::kIsNan) return v != v;
  else if constexpr (K == TestKind::kIsInf) return v == kInf || v == -kInf;
  else if constexpr (K == TestKind::kIsFinite) return v == v && v != kInf && v != -kInf;
  else if constexpr (K == TestKind::kLessEqual) return v <= a;
  else if constexpr (K == TestKind::kGreater) return v > a;
  else if constexpr (K == TestKind::kScaledGreater) return v * a > b;
  else if constexpr (K == TestKind::kInClosed) return a <= v && v <= b;
  else return v <= a || v >= b;
}

/// Calls f.template operator()<K>() with K = kind: CPU loops pick the test once, outside
/// the loop; the CUDA kernel switches per element (a uniform branch, free there).
template <class F>
constexpr decltype(auto) visit_test_kind(TestKind kind, F&& f) {
  switch (kind) {
    case TestKind::kIsNan: return f.template operator()<TestKind::kIsNan>();
    case TestKind::kIsInf: return f.template operator()<TestKind::kIsInf>();
    case TestKind::kIsFinite: return f.template operator()<TestKind::kIsFinite>();
    case TestKind::kLessEqual: return f.template operator()<TestKind::kLessEqual>();
    case TestKind::kGreater: return f.template operator()<TestKind::kGreater>();
    case TestKind::kScaledGreater: return f.template operator()<TestKind::kScaledGreater>();
    case TestKind::kInClosed: return f.template operator()<TestKind::kInClosed>();
    case TestKind::kOutsideOpen: break;
  }
  return f.template operator()<TestKind::kOutsideOpen>();
}

/// Test `kind` of v, chosen at run time (the CUDA kernel's form).
template <class M>
constexpr bool passes(TestKind kind, M v, M a, M b) {
  return visit_test_kind(kind, [&]<TestKind K>() { return passes<K>(v, a, b); });
}

/// The masks of clamp's gradient with tensor bounds (PyTorch's clamp_backward_min_max): where
/// the gradient reaches x, min and max.
enum class ClampGradMask : uint8_t {
  kInput,  // min <= x <= max
  kMin,    // x < min and min < max
  kMax,    // x > max or max < min
};

template <class M>
constexpr bool clamp_grad_passes(ClampGradMask which, M v, M lo, M hi) {
  switch (which) {
    case ClampGradMask::kInput: return v >= lo && v <= hi;
    case ClampGradMask::kMin: return v < lo && lo < hi;
    case ClampGradMask::kMax: break;
  }
  return v > hi || hi < lo;
}

}  // namespace ember
