// The per-element formulas that the CPU loops and the CUDA kernels share (core/ops/
// unary_math.h, activation_math.h), called directly: every functor over edge values (0, -0,
// +-1, +-inf, nan, denormals, the ends of each type, the regions where a formula switches or
// cancels) in each compute type it is instantiated for, against a reference written here in
// long double (for float and double) or in wide integers (wrapped back to the type). Then
// the CPU's SIMD float32 forms against the functor they stand in for. Since CUDA compiles these
// very functors, a formula checked here is the one a GPU runs.
#include <bit>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>
#include "ember/core/cpu/vec_math.h"
#include "ember/core/ops/activation_math.h"
#include "ember/core/ops/unary_math.h"

using namespace ember;
using LD = long double;

namespace {

template <class M>
constexpr M kInf = std::numeric_limits<M>::infinity();
template <class M>
constexpr M kNan = std::numeric_limits<M>::quiet_NaN();

/// The edge values of M, then a fixed pseudo-random spread over [-12, 12].
template <class M>
std::vector<M> edge_values() {
  using L = std::numeric_limits<M>;
  std::vector<M> v = {M(0),    -M(0),    M(1),      M(-1),      M(0.5),       M(-0.5),      M(2),
                      M(-2),   M(3.5),   M(-3.5),   M(10),      M(-10),       M(20),        M(-20),
                      M(30),   M(-30),   M(88.5),   M(-87.5),   M(100),       M(-100),      M(710),
                      M(-745), M(1e-3),  M(-1e-3),  M(1e-30),   M(-1e-30),    L::denorm_min(), -L::denorm_min(),
                      L::min(), -L::min(), L::epsilon(), M(0.999999), M(-0.999999), M(1.000001), M(1e30),
                      M(-1e30), L::max(), L::lowest(), kInf<M>, -kInf<M>, kNan<M>};
  std::mt19937 gen(20261202);
  std::uniform_real_distribution<double> spread(-12, 12);
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<M>(spread(gen)));
  return v;
}

/// Distance in units in the last place between two finite-or-inf values of M (zeros of either
/// sign are one value).
template <class M>
int64_t ulp_distance(M a, M b) {
  if (a == b) return 0;
  using I = std::conditional_t<sizeof(M) == 4, int32_t, int64_t>;
  auto ord = [](M f) {
    I i = std::bit_cast<I>(f);
    // Map the sign-magnitude bit pattern onto a line ordered like the values.
    return i < 0 ? -static_cast<int64_t>(i & std::numeric_limits<I>::max()) : static_cast<int64_t>(i);
  };
  int64_t d = ord(a) - ord(b);
  return d < 0 ? -d : d;
}

/// How close a functor must come to the reference: `ulps` of the result rounded to M, or
/// within `cancel` * eps * |x| where the formula subtracts nearly equal terms (1 + erf(x) for
/// very negative x, for example: that loss is the formula's, on both devices and in PyTorch).
struct Tolerance {
  int64_t ulps = 4;
  double cancel = 0;
};

/// Checks fn(x) against ref(x) for every edge value of M.
template <class M, class Fn, class Ref>
void sweep(const char* name, const Fn& fn, const Ref& ref, Tolerance tol = {}) {
  for (M x : edge_values<M>()) {
    M got = fn(x);
    LD want_ld = ref(static_cast<LD>(x));
    M want = static_cast<M>(want_ld);
    INFO(std::string(name) << "(" << static_cast<double>(x) << ") in " << std::string(sizeof(M) == 4 ? "float" : "double")
                           << ": got " << static_cast<double>(got) << ", want " << static_cast<double>(want));
    if (std::isnan(want) || std::isnan(got)) {
      CHECK(std::isnan(want) == std::isnan(got));
      continue;
    }
    if (ulp_distance(got, want) <= tol.ulps) continue;
    // Below the smallest normal number a formula may lose everything to underflow (sigmoid(-100)
    // in float is 1 / (1 + inf) = 0, as in PyTorch); beyond that, cancellation's allowance.
    double slack = std::max(static_cast<double>(std::numeric_limits<M>::min()),
                            tol.cancel * static_cast<double>(std::numeric_limits<M>::epsilon()) * std::fabs(static_cast<double>(x)));
    CHECK(std::fabs(static_cast<LD>(got) - want_ld) <= static_cast<LD>(slack));
  }
}

template <class Fn, class Ref>
void sweep_floats(const char* name, const Fn& fn, const Ref& ref, Tolerance tol = {}) {
  sweep<float>(name, fn, ref, tol);
  sweep<double>(name, fn, ref, tol);
}

constexpr LD kSqrt2 = 1.41421356237309504880168872420969808L;
constexpr LD kSqrt2OverPi = 0.797884560802865355879892119868763737L;

}  // namespace

TEST_CASE("test_elementwise_functors: exponentials, logarithms and roots against long double") {
  sweep_floats("exp", ExpFn{}, [](LD x) { return expl(x); });
  sweep_floats("exp2", Exp2Fn{}, [](LD x) { return exp2l(x); });
  sweep_floats("expm1", Expm1Fn{}, [](LD x) { return expm1l(x); });
  sweep_floats("log", LogFn{}, [](LD x) { return logl(x); });
  sweep_floats("log2", Log2Fn{}, [](LD x) { return log2l(x); });
  sweep_floats("log10", Log10Fn{}, [](LD x) { return log10l(x); });
  sweep_floats("log1p", Log1pFn{}, [](LD x) { return log1pl(x); });
  sweep_floats("sqrt", SqrtFn{}, [](LD x) { return sqrtl(x); });
  sweep_floats("rsqrt", RsqrtFn{}, [](LD x) { return 1.0L / sqrtl(x); });
  sweep_floats("reciprocal", ReciprocalFn{}, [](LD x) { return 1.0L / x; });
}

TEST_CASE("test_elementwise_functors: trigonometric, hyperbolic, sigmoid and erf against long double") {
  sweep_floats("sin", SinFn{}, [](LD x) { return sinl(x); });
  sweep_floats("cos", CosFn{}, [](LD x) { return cosl(x); });
  sweep_floats("tan", TanFn{}, [](LD x) { return tanl(x); });
  sweep_floats("asin", AsinFn{}, [](LD x) { return asinl(x); });
  sweep_floats("acos", AcosFn{}, [](LD x) { return acosl(x); });
  sweep_floats("atan", AtanFn{}, [](LD x) { return atanl(x); });
  sweep_floats("sinh", SinhFn{}, [](LD x) { return sinhl(x); });
  sweep_floats("cosh", CoshFn{}, [](LD x) { return coshl(x); });
  sweep_floats("tanh", TanhFn{}, [](LD x) { return tanhl(x); });
  sweep_floats("asinh", AsinhFn{}, [](LD x) { return asinhl(x); });
  sweep_floats("acosh", AcoshFn{}, [](LD x) { return acoshl(x); });
  sweep_floats("atanh", AtanhFn{}, [](LD x) { return atanhl(x); });
  sweep_floats("sigmoid", SigmoidFn{}, [](LD x) { return 1.0L / (1.0L + expl(-x)); });
  sweep_floats("erf", ErfFn{}, [](LD x) { return erfl(x); });
  sweep_floats("erfc", ErfcFn{}, [](LD x) { return erfcl(x); });
}

TEST_CASE("test_elementwise_functors: rounding is exact, halves to even") {
  Tolerance exact{0, 0};
  sweep_floats("floor", FloorFn{}, [](LD x) { return floorl(x); }, exact);
  sweep_floats("ceil", CeilFn{}, [](LD x) { return ceill(x); }, exact);
  sweep_floats("trunc", TruncFn{}, [](LD x) { return truncl(x); }, exact);
  sweep_floats("round", RoundFn{}, [](LD x) { return nearbyintl(x); }, exact);
  sweep_floats("frac", FracFn{}, [](LD x) { return x - truncl(x); }, exact);
  CHECK(RoundFn{}(2.5f) == 2.0f);
  CHECK(RoundFn{}(3.5f) == 4.0f);
  CHECK(RoundFn{}(-2.5) == -2.0);
  CHECK(std::signbit(RoundFn{}(-0.25f)));
  CHECK(FracFn{}(-2.5f) == -0.5f);  // keeps the sign of x
  CHECK(std::isnan(FracFn{}(kInf<float>)));  // inf - inf
}

TEST_CASE("test_elementwise_functors: round with decimals, hand-computed") {
  RoundDecimalsFn two{100, false}, minus_one{10, true};
  CHECK(two(0.125f) == 0.12f);    // 12.5 -> 12 (half to even)
  CHECK(two(-0.125f) == -0.12f);
  CHECK(two(0.375) == 0.38);      // 37.5 -> 38
  CHECK(minus_one(25.0f) == 20.0f);  // 2.5 -> 2
  CHECK(minus_one(35.0f) == 40.0f);  // 3.5 -> 4
  CHECK(minus_one(-15.0) == -20.0);
  CHECK(std::isnan(two(kNan<float>)));
  CHECK(two(kInf<double>) == kInf<double>);
}

namespace {

/// Integer edge values of T: 0, +-1, 2, the ends and their neighbours.
template <class T>
std::vector<T> int_edges() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0), T(1), T(2), T(7), T(100), L::max(), T(L::max() - 1), L::min(), T(L::min() + 1)};
  if constexpr (std::is_signed_v<T>) {
    for (T x : {T(-1), T(-2), T(-7), T(-100)}) v.push_back(x);
  }
  return v;
}

/// fn(x) == the reference computed in __int128 and wrapped to T (two's complement, as the
/// kernels' integer arithmetic wraps), for every integer dtype.
template <class Fn, class Ref>
void sweep_ints(const char* name, const Fn& fn, const Ref& ref) {
  auto one_type = [&]<typename T>() {
    for (T x : int_edges<T>()) {
      INFO(std::string(name) << "(" << static_cast<int64_t>(x) << ") in a " << sizeof(T) << "-byte "
                             << std::string(std::is_signed_v<T> ? "signed" : "unsigned") << " integer");
      CHECK(fn(x) == static_cast<T>(ref(static_cast<__int128>(x))));
    }
  };
  one_type.template operator()<uint8_t>();
  one_type.template operator()<int8_t>();
  one_type.template operator()<int16_t>();
  one_type.template operator()<int32_t>();
  one_type.template operator()<int64_t>();
}

}  // namespace

TEST_CASE("test_elementwise_functors: integer maps wrap at the ends of each type") {
  sweep_ints("neg", NegFn{}, [](__int128 x) { return -x; });
  sweep_ints("abs", AbsFn{}, [](__int128 x) { return x < 0 ? -x : x; });
  sweep_ints("square", SquareFn{}, [](__int128 x) { return x * x; });
  sweep_ints("sign", SignFn{}, [](__int128 x) { return static_cast<__int128>((x > 0) - (x < 0)); });
  sweep_ints("floor", FloorFn{}, [](__int128 x) { return x; });
  sweep_ints("round", RoundFn{}, [](__int128 x) { return x; });
  sweep_ints("relu", ReluFn{}, [](__int128 x) { return x < 0 ? __int128{0} : x; });
  // Bounds every integer type holds (a bound outside the type's range does not convert).
  sweep_ints("hardtanh(2, 5)", HardtanhFn{2, 5}, [](__int128 x) { return x < 2 ? __int128{2} : x > 5 ? __int128{5} : x; });
  CHECK(HardtanhFn{-3, 5}(int16_t{-300}) == -3);
  CHECK(NegFn{}(int8_t{-128}) == int8_t{-128});
  CHECK(AbsFn{}(int32_t{std::numeric_limits<int32_t>::min()}) == std::numeric_limits<int32_t>::min());
  CHECK(SignFn{}(true) == true);
  CHECK(SignFn{}(false) == false);
  CHECK(IsZeroFn{}(int64_t{0}));
  CHECK_FALSE(IsZeroFn{}(uint8_t{255}));
}

TEST_CASE("test_elementwise_functors: sign-like float maps keep nan and signed zeros") {
  Tolerance exact{0, 0};
  sweep_floats("neg", NegFn{}, [](LD x) { return -x; }, exact);
  sweep_floats("abs", AbsFn{}, [](LD x) { return fabsl(x); }, exact);
  sweep_floats("square", SquareFn{}, [](LD x) { return x * x; }, Tolerance{0, 0});
  sweep_floats("sign", SignFn{}, [](LD x) { return x > 0 ? 1.0L : x < 0 ? -1.0L : 0.0L; }, exact);
  CHECK(SignFn{}(kNan<float>) == 0.0f);  // PyTorch: sign(nan) is 0
  CHECK(std::signbit(NegFn{}(0.0)));
  CHECK_FALSE(std::signbit(AbsFn{}(-0.0f)));
  CHECK(IsZeroFn{}(-0.0f));
  CHECK_FALSE(IsZeroFn{}(kNan<double>));
}

TEST_CASE("test_elementwise_functors: nan_to_num replaces nan and each infinity") {
  NanToNumFn fn{1.5, 100, -200};
  CHECK(fn(kNan<float>) == 1.5f);
  CHECK(fn(kInf<float>) == 100.0f);
  CHECK(fn(-kInf<double>) == -200.0);
  CHECK(fn(3.25) == 3.25);
  CHECK(fn(std::numeric_limits<float>::max()) == std::numeric_limits<float>::max());
  CHECK(std::signbit(fn(-0.0f)));
}

TEST_CASE("test_elementwise_functors: activations against long double") {
  sweep_floats("relu", ReluFn{}, [](LD x) { return x < 0 ? 0.0L : x; }, Tolerance{0, 0});
  sweep_floats("leaky_relu(0.01)", LeakyReluFn{0.01}, [](LD x) { return x > 0 ? x : x * 0.01L; }, Tolerance{1, 0});
  sweep_floats("hardtanh(-1, 1)", HardtanhFn{-1, 1}, [](LD x) { return x < -1 ? -1.0L : x > 1 ? 1.0L : x; },
               Tolerance{0, 0});
  // elu's negative side is scale * alpha * expm1(input_scale * x); selu's constants.
  const double a = 1.6732632423543772, sc = 1.0507009873554805;
  sweep_floats("selu", EluFn{a, sc, 1}, [&](LD x) { return x > 0 ? sc * x : LD(a * sc) * expm1l(x); }, Tolerance{4, 4});
  sweep_floats("elu(0.5, 1, 2)", EluFn{0.5, 1, 2}, [](LD x) { return x > 0 ? x : 0.5L * expm1l(2 * x); },
               Tolerance{4, 4});
  // 1 + erf(x/sqrt 2) cancels for very negative x (in both devices' formula and PyTorch's).
  sweep_floats("gelu", GeluFn{}, [](LD x) { return 0.5L * x * (1 + erfl(x / kSqrt2)); }, Tolerance{4, 8});
  sweep_floats("gelu tanh", GeluTanhFn{},
               [](LD x) { return 0.5L * x * (1 + tanhl(kSqrt2OverPi * (x + 0.044715L * x * x * x))); },
               Tolerance{8, 16});
  sweep_floats("silu", SiluFn{}, [](LD x) { return x / (1 + expl(-x)); }, Tolerance{4, 4});
  sweep_floats("mish", MishFn{}, [](LD x) { return x * tanhl(log1pl(expl(x))); }, Tolerance{8, 8});
}

TEST_CASE("test_elementwise_functors: softplus switches to x where beta x passes the threshold") {
  for (double beta : {1.0, 2.0, 0.5}) {
    SoftplusFn fn{beta, 20};
    auto ref = [beta](LD x) {
      // The switch is decided in the compute type (as PyTorch's kernel decides it); here
      // the reference decides in long double, and the sweep's values are not near 20 / beta.
      LD bx = x * beta;
      return bx > 20 ? x : log1pl(expl(bx)) / beta;
    };
    sweep_floats("softplus", fn, ref, Tolerance{4, 4});
  }
  CHECK(SoftplusFn{1, 20}(21.0f) == 21.0f);
  CHECK(SoftplusFn{1, 20}(-kInf<float>) == 0.0f);
}

TEST_CASE("test_elementwise_functors: threshold, the shrinks and log_sigmoid") {
  sweep_floats("threshold(0.5, -3)", ThresholdFn{0.5, -3}, [](LD x) { return x <= 0.5L ? -3.0L : x; }, Tolerance{0, 0});
  sweep_ints("threshold(2, 7)", ThresholdFn{2, 7}, [](__int128 x) { return x <= 2 ? __int128{7} : x; });
  sweep_floats("hardshrink(0.5)", HardshrinkFn{0.5}, [](LD x) { return (x >= -0.5L && x <= 0.5L) ? 0.0L : x; },
               Tolerance{0, 0});
  sweep_floats("softshrink(0.5)", SoftshrinkFn{0.5},
               [](LD x) { return x > 0.5L ? x - 0.5L : x < -0.5L ? x + 0.5L : x * 0.0L; }, Tolerance{1, 0});
  sweep_floats("log_sigmoid", LogSigmoidFn{}, [](LD x) { return x < 0 ? x - log1pl(expl(x)) : -log1pl(expl(-x)); },
               Tolerance{4, 4});
  // Inside [-lambd, lambd] softshrink is x * 0: the sign of x survives, as in PyTorch.
  CHECK(std::signbit(SoftshrinkFn{0.5}(-0.25f)));
  CHECK(HardshrinkFn{0.5}(0.5) == 0.0);
  CHECK(ThresholdFn{0.5, -3}(0.5f) == -3.0f);
}

TEST_CASE("test_elementwise_functors: clamp's nan rules") {
  ClampFn<float> c{-1, 2};
  CHECK(c(-5) == -1);
  CHECK(c(5) == 2);
  CHECK(std::isnan(c(kNan<float>)));
  CHECK(std::isnan(ClampFn<double>{kNan<double>, 2}(1.0)));  // a nan bound wins
  CHECK(ClampFn<float>{3, 1}(2) == 1);                       // lo > hi gives hi
  CHECK(ClampTensorFn{}(int16_t{-300}, int16_t{-7}, int16_t{9}) == -7);
  CHECK(std::isnan(ClampTensorFn{}(0.5, 0.0, kNan<double>)));
  CHECK(max_nan(1.0f, kNan<float>) != max_nan(1.0f, kNan<float>));
  CHECK(min_nan(int8_t{4}, int8_t{-4}) == -4);
}

TEST_CASE("test_elementwise_functors: the CPU's SIMD float32 forms agree with the shared functors") {
  namespace vec = ember::cpu::vec;
  std::vector<float> xs = edge_values<float>();
  while (xs.size() % vec::kWidth) xs.push_back(0.25f);
  auto check = [&](const char* name, auto vf, auto fn, int64_t ulps) {
    alignas(32) float out[vec::kWidth];
    for (size_t i = 0; i < xs.size(); i += vec::kWidth) {
      vec::store(out, vf(vec::load(&xs[i])));
      for (int64_t j = 0; j < vec::kWidth; ++j) {
        float x = xs[i + j], want = fn(x);
        INFO(std::string(name) << "(" << x << "): SIMD " << out[j] << ", functor " << want);
        if (std::isnan(want) || std::isnan(out[j])) {
          CHECK(std::isnan(want) == std::isnan(out[j]));
        } else if (ulp_distance(out[j], want) > ulps) {
          // gelu's cancellation for very negative x, as in the long double sweep.
          CHECK(std::fabs(out[j] - want) <= 16 * std::numeric_limits<float>::epsilon() * std::fabs(x));
        }
      }
    }
  };
  check("exp", [](vec::f8 v) { return vec::exp(v); }, ExpFn{}, 2);
  check("tanh", [](vec::f8 v) { return vec::tanh(v); }, TanhFn{}, 4);
  check("sigmoid", [](vec::f8 v) { return vec::sigmoid(v); }, SigmoidFn{}, 4);
  check("erf", [](vec::f8 v) { return vec::erf(v); }, ErfFn{}, 4);
  check("gelu", [](vec::f8 v) { return vec::gelu(v); }, GeluFn{}, 8);
  check("gelu tanh", [](vec::f8 v) { return vec::gelu_tanh(v); }, GeluTanhFn{}, 8);
}
