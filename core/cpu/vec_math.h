// vec_math: float32 transcendental functions on 8-lane vectors (GCC vector extensions, AVX2
// registers under the x86-64-v3 baseline), for the elementwise kernels of exp, erf, tanh,
// sigmoid and gelu. Each is accurate to a few ulp over the whole float range (tested against
// std:: in tests/core/test_vec_math.cpp) and handles the special values as std:: does:
// NaN stays NaN, exp(-inf) = 0, exp(inf) = inf, overflow gives inf, results that underflow
// are denormal or 0, erf/tanh(+-inf) = +-1, and -0 keeps its sign where std:: keeps it.
// The polynomials were fitted for this file (weighted least squares iterated toward minimax
// on Chebyshev nodes, coefficients rounded to float one at a time with the rest refitted).
#pragma once

#include <cstdint>
#include <cstring>

namespace ember::cpu::vec {

using f8 = float __attribute__((vector_size(32)));
using i8 = int32_t __attribute__((vector_size(32)));
constexpr int64_t kWidth = 8;

inline f8 splat(float v) { return f8{v, v, v, v, v, v, v, v}; }
inline f8 load(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, f8 v) { std::memcpy(p, &v, sizeof v); }
// A C-style cast between vector types of one size reinterprets the bits.
inline i8 as_int(f8 v) { return (i8)v; }
inline f8 as_float(i8 v) { return (f8)v; }
inline f8 abs(f8 x) { return as_float(as_int(x) & 0x7fffffff); }
/// |mag| with the sign of sgn.
inline f8 copysign(f8 mag, f8 sgn) {
  return as_float((as_int(mag) & 0x7fffffff) | (as_int(sgn) & static_cast<int32_t>(0x80000000u)));
}
/// m ? a : b per lane (m from a vector comparison: all ones or zero).
inline f8 select(i8 m, f8 a, f8 b) { return m ? a : b; }
/// min/max that pick the constant when x is NaN are not wanted: these keep x's NaN
/// (the comparison is false for NaN, so x is returned).
inline f8 clamp_lo(f8 x, float lo) { return x < lo ? splat(lo) : x; }
inline f8 clamp_hi(f8 x, float hi) { return x > hi ? splat(hi) : x; }

/// e^(x - n ln2) for x - n ln2 within ln2/2 of 0: the shared core of exp and exp_finite.
/// Cody-Waite reduction r = x - n ln2 in two steps (ln2's high part is exact in float), then a
/// degree-6 polynomial for e^r (Cephes' expf coefficients, max error about 1 ulp).
inline f8 exp_reduced(f8 x, f8 n) {
  f8 r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f8 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return (r * r) * p + r + 1.0f;
}

/// e^x: n = round(x / ln2), e^(x - n ln2) by exp_reduced, then 2^n applied as two factors
/// 2^(n/2) 2^(n-n/2) so that results near the overflow and denormal ends are formed with a
/// single rounding. x is clamped to [-104, 89] first: exp(89) overflows to inf and exp(-104)
/// rounds to 0, as do all values beyond.
inline f8 exp(f8 x) {
  f8 xc = clamp_hi(clamp_lo(x, -104.0f), 89.0f);
  const f8 shifter = splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  f8 n = (xc * 1.44269504088896341f + shifter) - shifter;
  f8 y = exp_reduced(xc, n);
  i8 ni = __builtin_convertvector(n, i8);
  i8 n1 = ni >> 1, n2 = ni - n1;
  y = y * as_float((n1 + 127) << 23);
  y = y * as_float((n2 + 127) << 23);
  return select(x != x, x, y);
}

/// e^x for x in [-87, 88] only (no clamping, NaN or denormal handling): the inner exp of erf,
/// whose argument stays in [-18, 0]. Same reduction and polynomial as exp.
inline f8 exp_finite(f8 x) {
  const f8 shifter = splat(12582912.0f);
  f8 t = x * 1.44269504088896341f + shifter;
  f8 n = t - shifter;
  f8 y = exp_reduced(x, n);
  // t's bits are 0x4b400000 + n (1.5 * 2^23 + n): 2^n is (n + 127) << 23.
  return y * as_float((as_int(t) + (127 - 0x4b400000)) << 23);
}

/// erf(x). |x| < 0.921875: x + x P(x^2) (relative error ~1e-9 before rounding); above:
/// 1 - e^{Q(|x|)} with Q fitted to log erfc on [0.921875, 4]; |x| >= 4 gives +-1 (erfc(4)
/// is below half an ulp of 1).
inline f8 erf(f8 x) {
  f8 a = abs(x);
  f8 s = x * x;
  f8 p = splat(7.991272286744788e-05f);
  p = p * s + -0.000804888317361474f;
  p = p * s + 0.0051923589780926704f;
  p = p * s + -0.026855723932385445f;
  p = p * s + 0.11283625662326813f;
  p = p * s + -0.3761262893676758f;
  p = p * s + 0.12837916612625122f;
  f8 small = x * p + x;
  f8 u = clamp_hi(clamp_lo(a, 0.921875f), 4.0f);
  f8 q = splat(-5.470042907518291e-08f);
  q = q * u + 1.3060897572358954e-06f;
  q = q * u + -1.2083351066394243e-05f;
  q = q * u + 3.736315920832567e-05f;
  q = q * u + 0.0002720022457651794f;
  q = q * u + -0.003913958091288805f;
  q = q * u + 0.024930773302912712f;
  q = q * u + -0.10832452028989792f;
  q = q * u + -0.6331491470336914f;
  q = q * u + -1.1296570301055908f;
  q = q * u + 0.00020983675494790077f;
  f8 big = 1.0f - exp_finite(q);
  big = select(a >= 4.0f, splat(1.0f), big);
  // NaN: the comparison is false and small is NaN. copysign keeps erf(-0) = -0.
  return copysign(select(a > 0.921875f, big, small), x);
}

/// tanh(x). |x| < 0.625: x + x s P(s), s = x^2; above: 1 - 2 / (e^{2|x|} + 1) with the sign
/// of x (e^{2|x|} overflowing to inf gives exactly 1).
inline f8 tanh(f8 x) {
  f8 a = abs(x);
  f8 s = x * x;
  f8 p = splat(0.002046281937509775f);
  p = p * s + -0.008068694733083248f;
  p = p * s + 0.021655095741152763f;
  p = p * s + -0.05393798649311066f;
  p = p * s + 0.133331298828125f;
  p = p * s + -0.333333283662796f;
  f8 small = (x * s) * p + x;
  f8 e = exp_finite(2.0f * clamp_hi(a, 20.0f));  // NaN lanes take the small branch
  f8 big = 1.0f - 2.0f / (e + 1.0f);
  return copysign(select(a > 0.625f, big, small), x);  // keeps tanh(-0) = -0
}

/// 1 / (1 + e^{-x}), the formula of the scalar path.
inline f8 sigmoid(f8 x) { return 1.0f / (1.0f + exp(-x)); }

/// x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), the formula of the scalar path.
inline f8 gelu(f8 x) { return 0.5f * x * (1.0f + erf(x * 0.707106781186547524401f)); }

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the formula of the scalar path.
inline f8 gelu_tanh(f8 x) {
  f8 inner = 0.797884560802865355879f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanh(inner));
}

}  // namespace ember::cpu::vec
