// The formulas of the binary-family ops, called directly (no tensors): the functors of
// core/ops/binary_math.h, compare_math.h and ternary_math.h, which the CPU loops and the CUDA
// kernels both run. Each is swept over edge values (0, -0, +-1, +-inf, NaN, denormals, the
// integer extremes) for every compute type (bool, the integer types, float for
// float16/bfloat16/float32, double) against a reference written here independently: integer
// results in __int128 reduced modulo 2^bits, floating ones in wider arithmetic (long double,
// __float128) rounded once per step of the formula (or once for a multiply-add the compiler
// may fuse), and C's Annex F tables for the special values of pow and atan2.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/ops/binary_math.h"
#include "ember/core/ops/compare_math.h"
#include "ember/core/ops/ternary_math.h"
#include "op_check.h"

using namespace ember;

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __float128 f128;

/// A type whose +, -, *, / of two M values, rounded to M, is M's correctly rounded result
/// (64 and 113 significant bits: at least twice M's plus two).
template <class M>
using wide_t = std::conditional_t<std::is_same_v<M, float>, long double, f128>;

/// v reduced modulo 2^bits of T, as two's-complement wrap-around defines it.
template <class T>
T wrap_to(i128 v) {
  return static_cast<T>(static_cast<uint64_t>(static_cast<u128>(v)));
}

template <class T>
std::vector<T> int_edges() {
  using L = std::numeric_limits<T>;
  std::vector<T> v{T(0), T(1), T(2), T(3), T(7), L::max(), T(L::max() - 1), L::min(), T(L::min() + 1)};
  if constexpr (std::is_signed_v<T>)
    for (int x : {-1, -2, -3, -7}) v.push_back(static_cast<T>(x));
  return v;
}

template <class M>
std::vector<M> float_edges() {
  using L = std::numeric_limits<M>;
  return {M(0),
          M(-0.0),
          M(1),
          M(-1),
          M(0.5),
          M(-0.5),
          M(2),
          M(-2.5),
          M(3),
          M(7),
          M(-7),
          M(0.1),
          M(1e-3),
          M(1e30),
          M(-1e30),
          L::denorm_min(),
          -L::denorm_min(),
          L::min(),
          -L::min(),
          L::max(),
          -L::max(),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN()};
}

/// Equal as IEEE values and in the sign of zero; any NaN equals any NaN.
template <class M>
bool same(M got, M want) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
    return got == want && std::signbit(got) == std::signbit(want);
  } else {
    return got == want;
  }
}

/// Within `ulps` units in the last place of want (same special values as same()).
template <class M>
bool near(M got, M want, int ulps) {
  if (same(got, want)) return true;
  if (!std::isfinite(got) || !std::isfinite(want)) return false;
  M lo = want, hi = want;
  for (int i = 0; i < ulps; ++i) {
    lo = std::nextafter(lo, -std::numeric_limits<M>::infinity());
    hi = std::nextafter(hi, std::numeric_limits<M>::infinity());
  }
  return got >= lo && got <= hi;
}

template <class M>
std::string show(M v) {
  if constexpr (std::is_same_v<M, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_floating_point_v<M>)
    return doctest::toString(static_cast<double>(v)).c_str();
  else
    return std::to_string(static_cast<int64_t>(v));
}

constexpr const char* kTypeNames[] = {"uint8", "int8", "int16", "int32", "int64"};

template <class F>
void for_int_types(F&& f) {
  f.template operator()<uint8_t>(kTypeNames[0]);
  f.template operator()<int8_t>(kTypeNames[1]);
  f.template operator()<int16_t>(kTypeNames[2]);
  f.template operator()<int32_t>(kTypeNames[3]);
  f.template operator()<int64_t>(kTypeNames[4]);
}

/// fn(a, b) == ref(a, b) for every pair of edge values.
template <class M, class Fn, class Ref>
void sweep2(const char* what, const std::vector<M>& edges, const Fn& fn, const Ref& ref) {
  for (M a : edges)
    for (M b : edges) {
      auto got = fn(a, b);
      auto want = ref(a, b);
      if (!same(got, want))
        FAIL_CHECK(std::string(what) << "(" << show(a) << ", " << show(b) << ") = " << show(got) << ", want "
                                     << show(want));
    }
}

// ---- integer references: the exact value in __int128, reduced modulo 2^bits ----------------

/// floor(a / b) for b != 0, from the definition on nonnegative operands.
i128 floor_div(i128 a, i128 b) {
  if (b < 0) return floor_div(-a, -b);
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
/// trunc(a / b) for b != 0.
i128 trunc_div(i128 a, i128 b) {
  i128 q = (a < 0 ? -a : a) / (b < 0 ? -b : b);
  return (a < 0) != (b < 0) ? -q : q;
}
/// base^e modulo 2^64 for e >= 0, by recursion on e.
u128 pow_mod64(u128 base, u128 e) {
  const u128 mask = ~uint64_t{0};
  if (e == 0) return 1;
  if (e % 2 == 1) return (base * pow_mod64(base, e - 1)) & mask;
  return pow_mod64((base * base) & mask, e / 2);
}
/// The integer pow rule: x^e for e >= 0 wrapped; a negative e is 1 / x^|e| truncated (1 for
/// x == 1, +-1 for x == -1, else 0).
template <class T>
T ref_int_pow(T x, int64_t e) {
  if (e < 0) {
    if (x == 1) return 1;
    if constexpr (std::is_signed_v<T>)
      if (x == -1) return static_cast<T>(e % 2 == 0 ? 1 : -1);
    return 0;
  }
  return static_cast<T>(static_cast<uint64_t>(pow_mod64(static_cast<u128>(static_cast<i128>(x)), e)));
}

template <class T>
void check_integer_arithmetic() {
  const std::vector<T> e = int_edges<T>();
  for (int64_t alpha :
       {int64_t{1}, int64_t{-1}, int64_t{3}, (int64_t{1} << 53) + 1, std::numeric_limits<int64_t>::min()}) {
    INFO("alpha " << alpha);
    const i128 al = wrap_to<T>(alpha);  // alpha in the tensor's dtype, as PyTorch converts it
    sweep2<T>("add", e, AddFn{{static_cast<double>(alpha), alpha}},
              [&](T a, T b) { return wrap_to<T>(a + al * b); });
    sweep2<T>("sub", e, SubFn{{static_cast<double>(alpha), alpha}},
              [&](T a, T b) { return wrap_to<T>(a - al * b); });
  }
  sweep2<T>("mul", e, MulFn{}, [](T a, T b) { return wrap_to<T>(i128(a) * b); });
  // A zero divisor yields 0: what CUDA stores (the CPU loop raises ZeroDivisionError instead).
  sweep2<T>("div_trunc", e, DivTruncFn{},
            [](T a, T b) { return b == 0 ? T(0) : wrap_to<T>(trunc_div(a, b)); });
  sweep2<T>("div_floor", e, DivFloorFn{},
            [](T a, T b) { return b == 0 ? T(0) : wrap_to<T>(floor_div(a, b)); });
  sweep2<T>("remainder", e, RemainderFn{},
            [](T a, T b) { return b == 0 ? T(0) : wrap_to<T>(i128(a) - i128(b) * floor_div(a, b)); });
  sweep2<T>("fmod", e, FmodFn{},
            [](T a, T b) { return b == 0 ? T(0) : wrap_to<T>(i128(a) - i128(b) * trunc_div(a, b)); });
  sweep2<T>("pow", e, PowFn{}, [](T a, T b) { return ref_int_pow<T>(a, static_cast<int64_t>(b)); });
  sweep2<T>("maximum", e, MaximumFn{}, [](T a, T b) { return i128(a) >= i128(b) ? a : b; });
  sweep2<T>("minimum", e, MinimumFn{}, [](T a, T b) { return i128(a) <= i128(b) ? a : b; });
  using U = std::make_unsigned_t<T>;
  sweep2<T>("bitwise_and", e, BitwiseAndFn{}, [](T a, T b) { return static_cast<T>(U(a) & U(b)); });
  sweep2<T>("bitwise_or", e, BitwiseOrFn{}, [](T a, T b) { return static_cast<T>(U(a) | U(b)); });
  sweep2<T>("bitwise_xor", e, BitwiseXorFn{}, [](T a, T b) { return static_cast<T>(U(a) ^ U(b)); });
  for (int64_t x : {int64_t{0}, int64_t{2}, int64_t{-1}, int64_t{63}, int64_t{64},
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), int64_t{-3}}) {
    PowScalarFn fn{{static_cast<double>(x), x}};
    for (T a : e) CHECK_MESSAGE(fn(a) == ref_int_pow<T>(a, x), "pow(" << show(a) << ", " << x << ")");
  }
}

template <class T>
void check_integer_compare_ternary() {
  const std::vector<T> e = int_edges<T>();
  sweep2<T>("eq", e, EqFn{}, [](T a, T b) { return i128(a) == i128(b); });
  sweep2<T>("ne", e, NeFn{}, [](T a, T b) { return i128(a) != i128(b); });
  sweep2<T>("lt", e, LtFn{}, [](T a, T b) { return i128(a) < i128(b); });
  sweep2<T>("le", e, LeFn{}, [](T a, T b) { return i128(a) <= i128(b); });
  sweep2<T>("gt", e, GtFn{}, [](T a, T b) { return i128(a) > i128(b); });
  sweep2<T>("ge", e, GeFn{}, [](T a, T b) { return i128(a) >= i128(b); });
  for (int64_t v : {int64_t{1}, int64_t{-2}, (int64_t{1} << 53) + 1}) {
    AddcmulFn fn{{static_cast<double>(v), v}};
    const i128 vv = wrap_to<T>(v);
    for (T a : e)
      for (T b : e)
        for (T c : {T(0), T(1), T(3), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()})
          CHECK_MESSAGE(fn(a, b, c) == wrap_to<T>(i128(a) + wrap_to<T>(vv * b) * i128(c)),
                        "addcmul(" << show(a) << ", " << show(b) << ", " << show(c) << ") value " << v);
  }
}

}  // namespace

TEST_CASE("test_binary_functors: integer arithmetic wraps and divides as PyTorch") {
  for_int_types([]<typename T>(const char* name) {
    INFO("type " << name);
    check_integer_arithmetic<T>();
    check_integer_compare_ternary<T>();
  });
}

TEST_CASE("test_binary_functors: hand-worked integer division rules") {
  const int8_t lo = std::numeric_limits<int8_t>::min();
  CHECK(DivTruncFn{}(lo, int8_t(-1)) == lo);  // -(-128) wraps
  CHECK(DivFloorFn{}(lo, int8_t(-1)) == lo);
  CHECK(RemainderFn{}(lo, int8_t(-1)) == 0);
  CHECK(FmodFn{}(lo, int8_t(-1)) == 0);
  CHECK(DivFloorFn{}(-7, 2) == -4);
  CHECK(DivTruncFn{}(-7, 2) == -3);
  CHECK(RemainderFn{}(-7, 2) == 1);
  CHECK(RemainderFn{}(7, -2) == -1);
  CHECK(FmodFn{}(-7, 2) == -1);
  CHECK(DivFloorFn{}(int64_t{5}, int64_t{0}) == 0);
  CHECK(PowFn{}(int64_t{3}, int64_t{40}) == static_cast<int64_t>(12157665459056928801ull));  // wraps
  CHECK(PowFn{}(int8_t(2), int8_t(7)) == int8_t(-128));
  CHECK(PowFn{}(int32_t(-1), int32_t(-3)) == -1);
  CHECK(PowFn{}(int32_t(0), int32_t(-1)) == 0);
}

TEST_CASE("test_binary_functors: bool") {
  const std::vector<bool> e{false, true};
  for (int64_t alpha : {0, 1, 2}) {
    AddFn fn{{static_cast<double>(alpha), alpha}};
    sweep2<bool>("add", e, fn, [&](bool a, bool b) { return a || (alpha != 0 && b); });
  }
  sweep2<bool>("mul", e, MulFn{}, [](bool a, bool b) { return a && b; });
  sweep2<bool>("maximum", e, MaximumFn{}, [](bool a, bool b) { return a || b; });
  sweep2<bool>("minimum", e, MinimumFn{}, [](bool a, bool b) { return a && b; });
  sweep2<bool>("bitwise_and", e, BitwiseAndFn{}, [](bool a, bool b) { return a && b; });
  sweep2<bool>("bitwise_or", e, BitwiseOrFn{}, [](bool a, bool b) { return a || b; });
  sweep2<bool>("bitwise_xor", e, BitwiseXorFn{}, [](bool a, bool b) { return a != b; });
  sweep2<bool>("logical_and", e, LogicalAndFn{}, [](bool a, bool b) { return a && b; });
  sweep2<bool>("logical_or", e, LogicalOrFn{}, [](bool a, bool b) { return a || b; });
  sweep2<bool>("logical_xor", e, LogicalXorFn{}, [](bool a, bool b) { return a != b; });
  sweep2<bool>("lt", e, LtFn{}, [](bool a, bool b) { return !a && b; });
  sweep2<bool>("ge", e, GeFn{}, [](bool a, bool b) { return a || !b; });
}

namespace {

// ---- floating references -------------------------------------------------------------------

/// a op b rounded once to M (wide_t holds M's operands and results exactly enough).
template <class M, class Op>
M rounded(M a, M b, Op op) {
  using W = wide_t<M>;
  return static_cast<M>(op(static_cast<W>(a), static_cast<W>(b)));
}

template <class M>
M nan_v() {
  return std::numeric_limits<M>::quiet_NaN();
}

/// Python's a // b as PyTorch's div_floor computes it: nan for nan or infinite a, the IEEE
/// quotient for b == 0, -1 or a signed zero for an infinite b, otherwise floor of the exact
/// quotient (a zero with the sign of a / b).
template <class M>
M ref_div_floor(M a, M b) {
  if (std::isnan(a) || std::isnan(b)) return nan_v<M>();
  if (b == 0) return rounded(a, b, [](auto x, auto y) { return x / y; });
  if (std::isinf(a)) return nan_v<M>();
  const bool negative = std::signbit(a) != std::signbit(b);
  if (std::isinf(b)) return a != 0 && negative ? M(-1) : std::copysign(M(0), negative ? M(-1) : M(1));
  long double q = std::floor(static_cast<long double>(a) / static_cast<long double>(b));
  if (q == 0) return std::copysign(M(0), negative ? M(-1) : M(1));
  return static_cast<M>(q);
}

/// Python's a % b with C's sign of zero: fmod's exact remainder moved into the divisor's sign.
template <class M>
M ref_remainder(M a, M b) {
  if (std::isnan(a) || std::isnan(b) || b == 0 || std::isinf(a)) return nan_v<M>();
  long double r = std::fmod(static_cast<long double>(a), static_cast<long double>(b));
  if (r != 0 && std::signbit(r) != std::signbit(b)) r += b;
  return static_cast<M>(r);
}

template <class M>
M ref_fmod(M a, M b) {
  if (std::isnan(a) || std::isnan(b) || b == 0 || std::isinf(a)) return nan_v<M>();
  return static_cast<M>(std::fmod(static_cast<long double>(a), static_cast<long double>(b)));
}

bool is_odd_integer(long double y) {
  return std::isfinite(y) && std::trunc(y) == y && std::fmod(y, 2.0L) != 0;
}

/// C's Annex F special values of pow(x, y); false when (x, y) is an ordinary case.
template <class M>
bool pow_special(M x, M y, M& out) {
  const M inf = std::numeric_limits<M>::infinity();
  const bool y_odd = is_odd_integer(y), y_int = std::isfinite(y) && std::trunc(y) == y;
  if (y == 0 || x == 1) return out = M(1), true;
  if (std::isnan(x) || std::isnan(y)) return out = nan_v<M>(), true;
  if (x == 0) {
    if (y < 0) return out = y_odd ? std::copysign(inf, x) : inf, true;
    return out = y_odd ? x : M(0), true;
  }
  if (std::isinf(y)) {
    if (x == -1) return out = M(1), true;
    const bool small = std::fabs(x) < 1;
    return out = (small == (y < 0)) ? inf : M(0), true;
  }
  if (std::isinf(x)) {
    if (x < 0) return out = y < 0 ? (y_odd ? M(-0.0) : M(0)) : (y_odd ? -inf : inf), true;
    return out = y < 0 ? M(0) : inf, true;
  }
  if (x < 0 && !y_int) return out = nan_v<M>(), true;
  return false;
}

/// C's Annex F special values of atan2(y, x); false when (y, x) is an ordinary case.
template <class M>
bool atan2_special(M y, M x, M& out) {
  const long double pi = 3.141592653589793238462643383279502884L;
  auto sgn = [&](long double v) { return static_cast<M>(std::signbit(y) ? -v : v); };
  if (std::isnan(x) || std::isnan(y)) return out = nan_v<M>(), true;
  if (y == 0) {
    if (x > 0 || (x == 0 && !std::signbit(x))) return out = y, true;
    return out = sgn(pi), true;
  }
  if (std::isinf(y)) {
    if (std::isinf(x)) return out = sgn(x > 0 ? pi / 4 : 3 * pi / 4), true;
    return out = sgn(pi / 2), true;
  }
  if (x == 0) return out = sgn(pi / 2), true;
  if (std::isinf(x)) return out = x > 0 ? std::copysign(M(0), y) : sgn(pi), true;
  return false;
}

template <class M>
void check_float_arithmetic() {
  const std::vector<M> e = float_edges<M>();
  auto add = [](auto x, auto y) { return x + y; };
  auto sub = [](auto x, auto y) { return x - y; };
  auto mul = [](auto x, auto y) { return x * y; };
  auto div = [](auto x, auto y) { return x / y; };
  for (double alpha : {1.0, -1.0, 2.0, 0.5, 0.0}) {
    INFO("alpha " << alpha);
    ScalarParam p{alpha, static_cast<int64_t>(alpha)};
    // a + alpha * b rounds the product first, unless the compiler fuses the two into one FMA
    // (nvcc does, and GCC on the x86-64-v3 baseline): either result is the formula's.
    for (M a : e)
      for (M b : e) {
        using W = wide_t<M>;
        M fused = static_cast<M>(W(a) + W(M(alpha)) * W(b)),
          separate = rounded(a, rounded(M(alpha), b, mul), add);
        M got = AddFn{p}(a, b);
        CHECK_MESSAGE((same(got, separate) || same(got, fused)),
                      "add(" << show(a) << ", " << show(b) << ") = " << show(got));
        fused = static_cast<M>(W(a) - W(M(alpha)) * W(b));
        separate = rounded(a, rounded(M(alpha), b, mul), sub);
        got = SubFn{p}(a, b);
        CHECK_MESSAGE((same(got, separate) || same(got, fused)),
                      "sub(" << show(a) << ", " << show(b) << ") = " << show(got));
      }
  }
  sweep2<M>("mul", e, MulFn{}, [&](M a, M b) { return rounded(a, b, mul); });
  sweep2<M>("div", e, DivFn{}, [&](M a, M b) { return rounded(a, b, div); });
  for (M s : e) {
    sweep2<M>(
        "mul_scalar", e, [&](M a, M) { return MulScalarFn{static_cast<double>(s)}(a); },
        [&](M a, M) { return rounded(a, s, mul); });
    sweep2<M>(
        "div_scalar", e, [&](M a, M) { return DivScalarFn{static_cast<double>(s)}(a); },
        [&](M a, M) { return rounded(a, s, div); });
  }
  // trunc of the rounded quotient: PyTorch's div_trunc for floats.
  sweep2<M>("div_trunc", e, DivTruncFn{}, [&](M a, M b) { return std::trunc(rounded(a, b, div)); });
  sweep2<M>("remainder", e, RemainderFn{}, ref_remainder<M>);
  sweep2<M>("fmod", e, FmodFn{}, ref_fmod<M>);
  // Quotients beyond 2^digits are not integers of M: there the formula may differ from the
  // rounded exact floor by an ulp.
  for (M a : e)
    for (M b : e) {
      M got = DivFloorFn{}(a, b), want = ref_div_floor(a, b);
      const bool exact = !(std::fabs(want) >= std::ldexp(M(1), std::numeric_limits<M>::digits));
      if (!(exact ? same(got, want) : near(got, want, 1)))
        FAIL_CHECK("div_floor(" << show(a) << ", " << show(b) << ") = " << show(got) << ", want "
                                << show(want));
    }
}

template <class M>
void check_float_math() {
  const std::vector<M> e = float_edges<M>();
  for (M a : e)
    for (M b : e) {
      M want;
      M got = PowFn{}(a, b);
      if (pow_special(a, b, want)) {
        if (!same(got, want))
          FAIL_CHECK("pow(" << show(a) << ", " << show(b) << ") = " << show(got) << ", want " << show(want));
      } else if (!near(got,
                       static_cast<M>(std::pow(static_cast<long double>(a), static_cast<long double>(b))),
                       1)) {
        FAIL_CHECK("pow(" << show(a) << ", " << show(b) << ") = " << show(got));
      }
      CHECK(same(PowScalarFn{{static_cast<double>(b), 0}}(a), got));
      got = Atan2Fn{}(a, b);
      if (atan2_special(a, b, want)) {
        if (!same(got, want))
          FAIL_CHECK("atan2(" << show(a) << ", " << show(b) << ") = " << show(got) << ", want "
                              << show(want));
      } else if (!near(got,
                       static_cast<M>(std::atan2(static_cast<long double>(a), static_cast<long double>(b))),
                       2)) {
        FAIL_CHECK("atan2(" << show(a) << ", " << show(b) << ") = " << show(got));
      }
    }
  // PyTorch's exact forms of pow with a scalar exponent.
  for (M v : e) {
    CHECK(same(CubeFn{}(v), rounded(rounded(v, v, [](auto x, auto y) { return x * y; }), v,
                                    [](auto x, auto y) { return x * y; })));
    CHECK(same(InvSquareFn{}(v), rounded(M(1), rounded(v, v, [](auto x, auto y) { return x * y; }),
                                         [](auto x, auto y) { return x / y; })));
  }
}

template <class M>
void check_float_select_compare() {
  const std::vector<M> e = float_edges<M>();
  // NaN from either side; on ties (0 and -0 too) the first operand, as std::max / std::min.
  sweep2<M>("maximum", e, MaximumFn{}, [](M a, M b) {
    if (std::isnan(a) || std::isnan(b)) return nan_v<M>();
    return std::isless(a, b) ? b : a;
  });
  sweep2<M>("minimum", e, MinimumFn{}, [](M a, M b) {
    if (std::isnan(a) || std::isnan(b)) return nan_v<M>();
    return std::isless(b, a) ? b : a;
  });
  sweep2<M>("eq", e, EqFn{}, [](M a, M b) { return !std::isunordered(a, b) && !std::islessgreater(a, b); });
  sweep2<M>("ne", e, NeFn{}, [](M a, M b) { return std::isunordered(a, b) || std::islessgreater(a, b); });
  sweep2<M>("lt", e, LtFn{}, [](M a, M b) { return static_cast<bool>(std::isless(a, b)); });
  sweep2<M>("le", e, LeFn{}, [](M a, M b) { return static_cast<bool>(std::islessequal(a, b)); });
  sweep2<M>("gt", e, GtFn{}, [](M a, M b) { return static_cast<bool>(std::isgreater(a, b)); });
  sweep2<M>("ge", e, GeFn{}, [](M a, M b) { return static_cast<bool>(std::isgreaterequal(a, b)); });
}

template <class M>
void check_float_ternary() {
  const std::vector<M> e = float_edges<M>();
  auto mul = [](auto x, auto y) { return x * y; };
  for (double v : {1.0, -0.5, 3.0}) {
    ScalarParam p{v, 0};
    for (M a : e)
      for (M b : e)
        for (M c : {M(0), M(-0.0), M(2), M(-3), std::numeric_limits<M>::infinity(), nan_v<M>(),
                    std::numeric_limits<M>::denorm_min()}) {
          // As for add: the last product and the sum may be fused into one FMA.
          using W = wide_t<M>;
          const M vb = rounded(M(v), b, mul), q = rounded(b, c, [](auto x, auto y) { return x / y; });
          M separate = rounded(a, rounded(vb, c, mul), [](auto x, auto y) { return x + y; });
          M fused = static_cast<M>(W(a) + W(vb) * W(c)), got = AddcmulFn{p}(a, b, c);
          CHECK_MESSAGE((same(got, separate) || same(got, fused)),
                        "addcmul(" << show(a) << ", " << show(b) << ", " << show(c) << ") = " << show(got));
          separate = rounded(a, rounded(M(v), q, mul), [](auto x, auto y) { return x + y; });
          fused = static_cast<M>(W(a) + W(M(v)) * W(q));
          got = AddcdivFn{p}(a, b, c);
          CHECK_MESSAGE((same(got, separate) || same(got, fused)),
                        "addcdiv(" << show(a) << ", " << show(b) << ", " << show(c) << ") = " << show(got));
        }
  }
  // lerp: exact at both ends, NaN in NaN out, and close to the exact value elsewhere.
  for (M a : e)
    for (M b : e) {
      if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(b - a)) continue;
      CHECK(LerpFn{}(a, b, M(0)) == a);
      CHECK(LerpFn{}(a, b, M(1)) == b);
      CHECK(std::isnan(LerpFn{}(a, b, nan_v<M>())));
      for (M w : {M(0.25), M(0.5), M(0.75), M(-1), M(2)}) {
        // Where a product of the formula overflows, the result depends on whether the compiler
        // fused it into an FMA (exact) or not (inf): both are the formula's; skip those.
        if (!std::isfinite(w * (b - a)) || !std::isfinite((b - a) * (M(1) - w))) continue;
        using W = wide_t<M>;
        auto exact = static_cast<M>(W(a) + W(w) * (W(b) - W(a)));
        CHECK_MESSAGE(near(LerpFn{}(a, b, w), exact, 2),
                      "lerp(" << show(a) << ", " << show(b) << ", " << show(w) << ")");
        CHECK(same(LerpScalarFn{static_cast<double>(w)}(a, b), LerpFn{}(a, b, w)));
      }
    }
}

}  // namespace

TEST_CASE("test_binary_functors: floating arithmetic rounds once per step") {
  SUBCASE("float") { check_float_arithmetic<float>(); }
  SUBCASE("double") { check_float_arithmetic<double>(); }
}

TEST_CASE("test_binary_functors: pow and atan2, special values and accuracy") {
  SUBCASE("float") { check_float_math<float>(); }
  SUBCASE("double") { check_float_math<double>(); }
}

TEST_CASE("test_binary_functors: maximum, minimum and comparisons with NaN and signed zeros") {
  SUBCASE("float") { check_float_select_compare<float>(); }
  SUBCASE("double") { check_float_select_compare<double>(); }
  CHECK(std::signbit(MaximumFn{}(-0.0f, 0.0f)));
  CHECK(!std::signbit(MaximumFn{}(0.0f, -0.0f)));
}

TEST_CASE("test_binary_functors: lerp, addcmul, addcdiv") {
  SUBCASE("float") { check_float_ternary<float>(); }
  SUBCASE("double") { check_float_ternary<double>(); }
}

TEST_CASE("test_binary_functors: where and masked_fill move elements untouched") {
  const uint32_t payload = 0x7fc12345u;  // a NaN with a payload
  CHECK(WhereFn{}(true, payload, 0u) == payload);
  CHECK(WhereFn{}(false, payload, 7u) == 7u);
  CHECK(MaskedFillFn{}(payload, false, 5u) == payload);
  CHECK(MaskedFillFn{}(payload, true, 5u) == 5u);
  CHECK(std::signbit(WhereFn{}(true, -0.0, 0.0)));
}

TEST_CASE("test_binary_functors: pow with a scalar exponent picks PyTorch's exact forms") {
  auto picked = [](ScalarType t, double e) {
    std::string name;
    visit_pow_scalar(t, ScalarParam{e, static_cast<int64_t>(e)}, [&]<class Fn>(const Fn&) {
      name = std::is_same_v<Fn, SqrtFn>         ? "sqrt"
             : std::is_same_v<Fn, SquareFn>     ? "square"
             : std::is_same_v<Fn, CubeFn>       ? "cube"
             : std::is_same_v<Fn, RsqrtFn>      ? "rsqrt"
             : std::is_same_v<Fn, ReciprocalFn> ? "reciprocal"
             : std::is_same_v<Fn, InvSquareFn>  ? "inv_square"
             : std::is_same_v<Fn, PowScalarFn>  ? "pow"
                                                : "?";
    });
    return name;
  };
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
    CHECK(picked(t, 0.5) == "sqrt");
    CHECK(picked(t, 2) == "square");
    CHECK(picked(t, 3) == "cube");
    CHECK(picked(t, -0.5) == "rsqrt");
    CHECK(picked(t, -1) == "reciprocal");
    CHECK(picked(t, -2) == "inv_square");
    CHECK(picked(t, 2.5) == "pow");
  }
  for (ScalarType t : {kLong, kInt, kByte, kBool}) CHECK(picked(t, 2) == "pow");
}

TEST_CASE("test_binary_functors: isclose") {
  const std::vector<double> e = float_edges<double>();
  for (std::pair<double, double> tols :
       {std::pair{1e-5, 1e-8}, std::pair{0.0, 0.0}, std::pair{0.5, 0.0}, std::pair{0.0, 2.0}})
    for (bool equal_nan : {false, true}) {
      const double rtol = tols.first, atol = tols.second;
      const IsCloseFn<> fn{rtol, atol, equal_nan};
      sweep2<double>(
          "isclose", e, [&](double a, double b) { return static_cast<double>(fn(a, b)); },
          [&](double a, double b) {
            if (std::isnan(a) || std::isnan(b))
              return static_cast<double>(equal_nan && std::isnan(a) && std::isnan(b));
            if (a == b) return 1.0;
            if (rtol == 0 && atol == 0) return 0.0;
            f128 diff = f128(a) - f128(b), tol = f128(atol) + f128(rtol) * (b < 0 ? -f128(b) : f128(b));
            double rounded_diff = static_cast<double>(diff < 0 ? -diff : diff);
            return static_cast<double>(std::isfinite(rounded_diff) &&
                                       rounded_diff <= static_cast<double>(tol));
          });
    }
  // Integers: |a - b| in the integer type wraps (PyTorch's integer subtraction) before the
  // float comparison.
  const IsCloseFn<> wide{0.0, 1.0, false};
  CHECK(wide(int8_t(-128), int8_t(127)));  // -128 - 127 wraps to 1
  CHECK(!wide(int8_t(0), int8_t(3)));
  CHECK(wide(true, false));
  CHECK(!IsCloseFn<>{0.0, 0.5, false}(true, false));
}

namespace {

/// round_to_storage<T> against core/half.h's conversion through T for the float with bits u.
template <class T>
bool rounds_like_half_h(uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof v);
  const float got = round_to_storage<T>(v), want = static_cast<float>(static_cast<T>(v));
  if (std::isnan(want)) return std::isnan(got);
  return std::memcmp(&got, &want, sizeof got) == 0;  // -0 and 0 apart
}

}  // namespace

TEST_CASE("test_binary_functors: isclose's float16/bfloat16 rounding is core/half.h's") {
  // round_to_storage is the one rounding both devices run (CUDA's used to be its own
  // intrinsics): every float16 and bfloat16 value, the floats halfway between neighbours (ties
  // to even), one ulp either side of them, and a strided sweep of all float bit patterns.
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float hv = static_cast<float>(Half::from_bits(static_cast<uint16_t>(h)));
    uint32_t u;
    std::memcpy(&u, &hv, sizeof u);
    for (uint32_t d : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) {
      CAPTURE(u + d);
      CHECK(rounds_like_half_h<Half>(u + d));
      CHECK(rounds_like_half_h<Half>((u - d) | (u & 0x80000000u)));
    }
    const uint32_t b = h << 16;
    for (uint32_t d : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      CAPTURE(b + d);
      CHECK(rounds_like_half_h<BFloat16>(b + d));
    }
  }
  int wrong = 0;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 9973) {
    wrong += !rounds_like_half_h<Half>(static_cast<uint32_t>(u));
    wrong += !rounds_like_half_h<BFloat16>(static_cast<uint32_t>(u));
  }
  CHECK(wrong == 0);
  // float16's edges: 65519.99 rounds to 65504, 65520 (a tie) to inf; 2^-25 (a tie) to 0 and
  // 3 * 2^-25 to 2^-23 (even); float32 and float64 are left alone.
  CHECK(round_to_storage<Half>(65519.99f) == 65504.0f);
  CHECK(std::isinf(round_to_storage<Half>(65520.0f)));
  CHECK(round_to_storage<Half>(0x1p-25f) == 0.0f);
  CHECK(round_to_storage<Half>(0x3p-25f) == 0x1p-23f);
  CHECK(round_to_storage<BFloat16>(1.0f + 0x1p-8f) == 1.0f);
  CHECK(round_to_storage<float>(1.0f + 0x1p-23f) == 1.0f + 0x1p-23f);
  CHECK(round_to_storage<double>(0.1) == 0.1);
}

TEST_CASE("test_binary_functors: isclose rounds float16/bfloat16 tolerances through the dtype") {
  // float16: rtol 1e-3 times b = 1000 rounds to 1; |a - b| = 1 for a = 1001: close.
  const IsCloseFn<Half> h{1e-3, 0.0, false};
  CHECK(h(1001.0f, 1000.0f));
  CHECK(!h(1002.0f, 1000.0f));
  // atol 1e-4 is 1678 * 2^-24 = 1.000166e-4 in float16, and so is the difference 1.0001e-4:
  // close, where unrounded 1.0001e-4 > 1e-4 would not be.
  const IsCloseFn<Half> t{0.0, 1e-4, false};
  CHECK(t(1.0001e-4f, 0.0f));
  CHECK(!IsCloseFn<>{0.0, 1e-4, false}(1.0001e-4f, 0.0f));
  // bfloat16: atol 0.0078 rounds to 2^-7, the difference between 1 + 2^-7 and 1: close.
  const IsCloseFn<BFloat16> bf{0.0, 0.0078, false};
  CHECK(bf(1.0078125f, 1.0f));
  CHECK(!IsCloseFn<>{0.0, 0.0078, false}(1.0078125f, 1.0f));
  // A difference that overflows float16 is not close, whatever the float says.
  const IsCloseFn<Half> o{0.0, 1e9, false};
  CHECK(!o(60000.0f, -60000.0f));
}
