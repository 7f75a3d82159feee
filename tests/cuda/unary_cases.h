// Shared by the CUDA tests of one-input ops (test_unary.cpp, test_activation.cpp): the table
// entry of an op, and the checks every such op gets on CUDA: each layout of cuda/loops.cuh
// (elementwise_layouts.h), special values, the in-place form through a strided view, and
// gradient parity.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "cuda/elementwise_layouts.h"

namespace ember::test {

/// A one-input op: out of place, in place (or null), and the input range of its domain.
struct UnaryCase {
  const char* name;
  Tensor (*f)(const Tensor&);
  Tensor& (*f_)(Tensor&);
  double lo = -3;
  double hi = 3;
};

/// A 1-d tensor of dtype t holding `v` (converted as Tensor::to does).
inline Tensor values_of(std::vector<double> v, ScalarType t) {
  return from_blob(v.data(), {static_cast<int64_t>(v.size())}, kDouble).clone().to(t);
}

/// Values where floating kernels differ if they differ anywhere: nan, infinities, signed
/// zeros, halves (round to even), tiny and huge numbers (inf in float16), the kinks of the
/// activations (0, +-1, 6) and numbers just beside them.
inline Tensor float_specials(ScalarType t) {
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return values_of(
      {kNan,  kInf, -kInf, 0.0,   -0.0, 0.5,   -0.5, 1.5, 2.5,  -2.5, 1.0,  -1.0,         6.0,
       1e-30, 1e30, -1e30, 65504, 1e5,  -7.25, 0.1,  3.0, -3.0, 20.0, 25.0, 1.0009765625, -0.9990234375},
      t);
}

/// The ends of an integer dtype's range (but its lowest value, whose negation overflows in
/// int64) and the numbers around zero.
inline Tensor int_extremes(ScalarType t) {
  int64_t lo = 0, hi = 0;
  switch (t) {
    case kUInt8:
      lo = 0, hi = 255;
      break;
    case kInt8:
      lo = -128, hi = 127;
      break;
    case kInt16:
      lo = -32768, hi = 32767;
      break;
    case kInt32:
      lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
      break;
    default:
      lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      break;
  }
  std::vector<int64_t> v = {lo + 1, -2, -1, 0, 1, 2, hi};
  if (t == kUInt8) v = {0, 1, 2, 127, 128, 254, 255};
  return from_blob(v.data(), {static_cast<int64_t>(v.size())}, kLong).clone().to(t);
}

/// Looser tolerances for gradients in float16/bfloat16: backward chains several rounded ops.
inline std::optional<Tol> grad_tol(ScalarType t) {
  if (t == kHalf) return Tol{1e-3, 4e-3};
  if (t == kBFloat16) return Tol{1e-2, 3e-2};
  return std::nullopt;
}

/// Forward parity of c over every layout (the big case in float32 and bfloat16 only: the
/// CPU reference takes a while), its special values, and its in-place form through a
/// transposed view (unless `inplace` is false: integer self of a float-producing op).
inline void check_unary_forward(const UnaryCase& c, ScalarType t, bool inplace = true) {
  INFO(std::string(c.name) << " on " << std::string(dtype_name(t)));
  auto f = c.f;
  bool big = t == kFloat || t == kBFloat16;
  check_layouts([f](const TensorList& x) { return f(x[0]); },
                [&](IntArrayRef s, int) { return make_input(s, t, c.lo, c.hi); }, 1, big);
  if (is_floating_point(t)) check_parity([f](const TensorList& x) { return f(x[0]); }, {float_specials(t)});
  if (c.f_ == nullptr || !inplace) return;
  auto f_ = c.f_;
  check_parity(
      [f_](const TensorList& x) {
        Tensor y = x[0].clone();
        Tensor view = y.t();
        f_(view);
        return y;
      },
      {make_input({6, 5}, t, c.lo, c.hi)});
}

/// Gradient parity of c in dtype t, on a dense and on a transposed input in [lo, hi).
inline void check_unary_grad(const UnaryCase& c, ScalarType t) {
  INFO(std::string(c.name) << " backward on " << std::string(dtype_name(t)));
  auto f = c.f;
  check_grad_parity([f](const TensorList& x) { return f(x[0]); }, {make_input({5, 7}, t, c.lo, c.hi)},
                    grad_tol(t));
  check_grad_parity([f](const TensorList& x) { return f(x[0].t()); }, {make_input({7, 5}, t, c.lo, c.hi)},
                    grad_tol(t));
}

}  // namespace ember::test
