// Half (IEEE binary16) and BFloat16 storage types. Arithmetic happens in float:
// kernels convert on load and round-to-nearest-even on store, as PyTorch's CPU kernels do.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace ember {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {  // subnormal half (or zero): scale into the integer range
    float mag = bits_float(abs) * 16777216.0f;  // 2^24: one unit of the smallest subnormal
    uint32_t m = static_cast<uint32_t>(mag);
    float rem = mag - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (abs >> 13));
}

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}
}  // namespace detail

/// IEEE 754 half precision (torch.float16).
struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(detail::float_to_half_bits(f)) {}  // NOLINT: implicit like c10::Half
  Half(double d) : Half(static_cast<float>(d)) {}
  Half(int64_t i) : Half(static_cast<float>(i)) {}
  Half(int i) : Half(static_cast<float>(i)) {}
  operator float() const { return detail::half_bits_to_float(x); }  // NOLINT
  static Half from_bits(uint16_t b) { Half h; h.x = b; return h; }
};

/// Brain floating point: float's exponent with a 7-bit mantissa (torch.bfloat16).
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) {  // NOLINT
    uint32_t u = detail::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { x = 0x7fc0; return; }  // nan
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    x = static_cast<uint16_t>(u >> 16);
  }
  BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  BFloat16(int64_t i) : BFloat16(static_cast<float>(i)) {}
  BFloat16(int i) : BFloat16(static_cast<float>(i)) {}
  operator float() const { return detail::bits_float(static_cast<uint32_t>(x) << 16); }  // NOLINT
  static BFloat16 from_bits(uint16_t b) { BFloat16 h; h.x = b; return h; }
};

}  // namespace ember

template <>
class std::numeric_limits<ember::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::Half lowest() { return ember::Half::from_bits(0xfbff); }
  static ember::Half max() { return ember::Half::from_bits(0x7bff); }
  static ember::Half infinity() { return ember::Half::from_bits(0x7c00); }
  static ember::Half quiet_NaN() { return ember::Half::from_bits(0x7e00); }
  static ember::Half epsilon() { return ember::Half::from_bits(0x1400); }
};

template <>
class std::numeric_limits<ember::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::BFloat16 lowest() { return ember::BFloat16::from_bits(0xff7f); }
  static ember::BFloat16 max() { return ember::BFloat16::from_bits(0x7f7f); }
  static ember::BFloat16 infinity() { return ember::BFloat16::from_bits(0x7f80); }
  static ember::BFloat16 quiet_NaN() { return ember::BFloat16::from_bits(0x7fc0); }
  static ember::BFloat16 epsilon() { return ember::BFloat16::from_bits(0x3c00); }
};
