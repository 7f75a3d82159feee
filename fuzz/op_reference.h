// The reference side of fuzz/fuzz_ops.cpp: reading a tensor's elements straight from memory
// through its sizes and strides, PyTorch's type promotion and broadcasting written out
// independently, and the comparison that turns a mismatch into a finding (abort with the
// operands printed). Everything here is plain loops over doubles, independent of ember's
// kernels; only ember's Half/BFloat16 scalar conversions are shared.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember_fuzz {

using namespace ember;
using Shape = std::vector<int64_t>;

constexpr ScalarType kTypes[] = {kFloat, kDouble, kHalf, kBFloat16, kLong, kInt, kShort, kChar, kByte, kBool};
constexpr int kMaxRank = 4, kMaxSize = 4, kPool = 6, kMaxOps = 12, kMaxKeptRank = 6;
constexpr int64_t kMaxNumel = 1024;
// Results larger than this are not checked (skipped): they would overflow the small integer
// and 16-bit float types, and nothing about shapes or strides needs them.
constexpr double kMaxMagnitude = 1e4;

/// A tensor's logical values (row-major), as the reference loops see them.
struct Vals {
  Shape shape;
  std::vector<double> v;
  ScalarType dtype = kFloat;
};

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Per op name: results checked against the reference, and invalid calls refused. With
// FUZZ_OPS_STATS set they are printed at exit (what the fuzzer really exercised).
inline std::map<std::string, std::pair<int64_t, int64_t>> g_stats;
inline void print_stats() {
  for (const auto& [op, n] : g_stats)
    std::fprintf(stderr, "fuzz_ops: %-44s checked %8lld  refused %8lld\n", op.c_str(),
                 static_cast<long long>(n.first), static_cast<long long>(n.second));
}

// What the current op was given, printed with a finding to make it reproducible by hand.
inline std::string g_operands;

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_ops finding: %s\noperands:\n%s", what.c_str(), g_operands.c_str());
  std::abort();
}

inline std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

inline bool is_float(ScalarType t) { return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16; }
inline bool is_int(ScalarType t) { return !is_float(t) && t != kBool; }

// ---- reading and writing raw elements (independent of ember's copy kernels) --------------

inline double load(const uint8_t* p, ScalarType t) {
  switch (t) {
    case kFloat:
      return *reinterpret_cast<const float*>(p);
    case kDouble:
      return *reinterpret_cast<const double*>(p);
    case kHalf:
      return static_cast<float>(*reinterpret_cast<const Half*>(p));
    case kBFloat16:
      return static_cast<float>(*reinterpret_cast<const BFloat16*>(p));
    case kLong:
      return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case kInt:
      return *reinterpret_cast<const int32_t*>(p);
    case kShort:
      return *reinterpret_cast<const int16_t*>(p);
    case kChar:
      return *reinterpret_cast<const int8_t*>(p);
    case kByte:
      return *p;
    case kBool:
      return *p != 0;
    default:
      finding("unexpected dtype");
  }
}

inline void store(uint8_t* p, ScalarType t, double v) {
  switch (t) {
    case kFloat:
      *reinterpret_cast<float*>(p) = static_cast<float>(v);
      break;
    case kDouble:
      *reinterpret_cast<double*>(p) = v;
      break;
    case kHalf:
      *reinterpret_cast<Half*>(p) = Half(static_cast<float>(v));
      break;
    case kBFloat16:
      *reinterpret_cast<BFloat16*>(p) = BFloat16(static_cast<float>(v));
      break;
    case kLong:
      *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(v);
      break;
    case kInt:
      *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(v);
      break;
    case kShort:
      *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(v);
      break;
    case kChar:
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v);
      break;
    case kByte:
      *p = static_cast<uint8_t>(v);
      break;
    case kBool:
      *p = v != 0;
      break;
    default:
      finding("unexpected dtype");
  }
}

/// Calls fn(flat, index) for every index of `shape` in row-major order.
inline void for_each_index(const Shape& shape, const std::function<void(int64_t, const Shape&)>& fn) {
  int64_t n = numel_of(shape);
  Shape idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(i, idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

/// One line about an operand: dtype, sizes, strides, offset and (the first) values.
inline std::string describe(const Tensor& t, const std::vector<double>& v) {
  std::string s = std::string(scalar_type_name(t.dtype())) + " sizes " + shape_text(t.sizes().vec()) +
                  " strides " + shape_text(t.strides().vec()) + " offset " +
                  std::to_string(t.storage_offset()) + " values";
  for (size_t i = 0; i < v.size() && i < 32; ++i) s += " " + std::to_string(v[i]);
  return s + "\n";
}

inline Vals read(const Tensor& t) {
  Vals r{t.sizes().vec(), {}, t.dtype()};
  const auto* base = static_cast<const uint8_t*>(t.data_ptr());
  Shape strides = t.strides().vec();
  for_each_index(r.shape, [&](int64_t, const Shape& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    r.v.push_back(load(base + off * t.element_size(), t.dtype()));
  });
  g_operands += describe(t, r.v);
  return r;
}

inline Tensor make(const Vals& x) {
  Tensor t = empty(x.shape, x.dtype);
  auto* p = static_cast<uint8_t*>(t.data_ptr());
  for (size_t i = 0; i < x.v.size(); ++i) store(p + i * t.element_size(), x.dtype, x.v[i]);
  return t;
}

// ---- comparing ---------------------------------------------------------------------------

inline double eps(ScalarType t) {
  switch (t) {
    case kHalf:
      return 0x1p-10;
    case kBFloat16:
      return 0x1p-7;
    case kFloat:
      return 0x1p-23;
    case kDouble:
      return 0x1p-52;
    default:
      return 0;
  }
}

/// The smallest difference worth reporting near zero: half's subnormal spacing; float and
/// bfloat16 kernels may flush subnormals (below float's smallest normal) to zero.
inline double tiny(ScalarType t) {
  return t == kHalf ? 0x1p-24 : t == kDouble ? std::numeric_limits<double>::min() : 0x1p-126;
}

/// Whether every value of `want` is exactly what its dtype holds: false for integers out of
/// the dtype's range (C++ leaves signed overflow undefined; the op is then skipped) and for
/// anything above kMaxMagnitude.
inline bool representable(const Vals& want) {
  double lo = want.dtype == kByte    ? 0
              : want.dtype == kChar  ? -128
              : want.dtype == kShort ? -32768
                                     : -kMaxMagnitude;
  double hi = want.dtype == kByte    ? 255
              : want.dtype == kChar  ? 127
              : want.dtype == kShort ? 32767
                                     : kMaxMagnitude;
  for (double v : want.v) {
    if (std::isnan(v) || std::isinf(v)) {
      if (!is_float(want.dtype) && want.dtype != kBool) return false;
      continue;
    }
    if (want.dtype != kBool && (v < lo || v > hi)) return false;
  }
  return true;
}

/// Checks `got` against `want`; `mag[i]` bounds the magnitude of what was summed into
/// element i (empty: |want[i]|), and `ulps` how many roundings of the dtype may separate them.
inline void check(const char* op, const Tensor& got_t, const Vals& want, const std::vector<double>& mag = {},
                  double ulps = 2) {
  Vals got = read(got_t);
  if (got.dtype != want.dtype)
    finding(std::string(op) + ": dtype " + std::string(scalar_type_name(got.dtype)) + ", expected " +
            scalar_type_name(want.dtype));
  if (got.shape != want.shape)
    finding(std::string(op) + ": shape " + shape_text(got.shape) + ", expected " + shape_text(want.shape));
  for (size_t i = 0; i < want.v.size(); ++i) {
    double g = got.v[i], w = want.v[i];
    if (want.dtype == kBool) w = w != 0;
    if (g == w || (std::isnan(w) && std::isnan(g))) continue;
    bool close = false;
    if (is_float(want.dtype) && std::isfinite(w)) {
      double scale = std::max(std::fabs(w), mag.empty() ? 0.0 : mag[i]);
      close = std::fabs(g - w) <= ulps * eps(want.dtype) * scale + tiny(want.dtype);
    }
    if (!close)
      finding(std::string(op) + ": element " + std::to_string(i) + " of shape " + shape_text(want.shape) +
              " is " + std::to_string(g) + ", expected " + std::to_string(w) + " (dtype " +
              scalar_type_name(want.dtype) + ")");
  }
  ++g_stats[op].first;
}

/// Runs an op that must be rejected; anything but ember::Error is a finding.
template <class F>
inline void expect_error(const char* op, F&& fn) {
  try {
    fn();
  } catch (const Error&) {
    ++g_stats[op].second;
    return;
  }
  finding(std::string(op) + ": accepted invalid arguments");
}

/// v converted to dtype t as PyTorch converts an operand to the common dtype: integers wrap
/// (two's complement), floats round to nearest, anything non-zero is true.
inline double to_dtype(double v, ScalarType t) {
  if (!std::isfinite(v))
    return t == kBool ? 1.0 : v;  // only float operands hold these; dt is then float or bool
  switch (t) {
    case kBool:
      return v != 0;
    case kByte:
      return static_cast<uint8_t>(static_cast<int64_t>(v));
    case kChar:
      return static_cast<int8_t>(static_cast<int64_t>(v));
    case kShort:
      return static_cast<int16_t>(static_cast<int64_t>(v));
    case kInt:
      return static_cast<int32_t>(static_cast<int64_t>(v));
    case kFloat:
      return static_cast<float>(v);
    case kHalf:
      return static_cast<float>(Half(static_cast<float>(v)));
    case kBFloat16:
      return static_cast<float>(BFloat16(static_cast<float>(v)));
    default:
      return v;  // kLong, kDouble
  }
}

// ---- type promotion (PyTorch's table, written out independently) -------------------------

inline int rank_of(ScalarType t) {
  switch (t) {
    case kBool:
      return 0;
    case kByte:
      return 1;
    case kChar:
      return 2;
    case kShort:
      return 3;
    case kInt:
      return 4;
    case kLong:
      return 5;
    case kHalf:
      return 6;
    case kBFloat16:
      return 7;
    case kFloat:
      return 8;
    default:
      return 9;  // kDouble
  }
}

inline ScalarType promote(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if ((a == kByte && b == kChar) || (a == kChar && b == kByte)) return kShort;
  if ((a == kHalf && b == kBFloat16) || (a == kBFloat16 && b == kHalf)) return kFloat;
  return rank_of(a) > rank_of(b) ? a : b;
}

/// The result dtype of a binary op: a 0-dim operand next to a dimensioned one only counts
/// when it is of a higher category (PyTorch's result_type: float[3] + double 0-dim = float).
inline ScalarType result_type(const Vals& a, const Vals& b) {
  bool a0 = a.shape.empty(), b0 = b.shape.empty();
  if (a0 == b0) return promote(a.dtype, b.dtype);
  ScalarType dim = a0 ? b.dtype : a.dtype, zero = a0 ? a.dtype : b.dtype;
  if (is_float(dim)) return dim;
  if (dim == kBool || is_float(zero)) return promote(dim, zero);
  return dim;
}

// ---- reference helpers -------------------------------------------------------------------

/// The broadcast shape of a and b, or false when they do not broadcast.
inline bool broadcast(const Shape& a, const Shape& b, Shape& out) {
  size_t n = std::max(a.size(), b.size());
  out.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}

/// The flat index into `src` of output index `idx` when src is broadcast to idx's shape.
inline int64_t broadcast_index(const Shape& src, const Shape& idx) {
  int64_t flat = 0, lead = static_cast<int64_t>(idx.size() - src.size());
  for (size_t d = 0; d < src.size(); ++d) flat = flat * src[d] + (src[d] == 1 ? 0 : idx[lead + d]);
  return flat;
}

inline int64_t flat_of(const Shape& shape, const Shape& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

/// Wraps a dim as PyTorch does (-1 is the last); false when out of range.
inline bool wrap_dim(int64_t& d, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (d < -r || d >= r) return false;
  if (d < 0) d += r;
  return true;
}

}  // namespace ember_fuzz
