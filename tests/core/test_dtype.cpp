// DTypes and the small value types: Half/BFloat16 conversions (exhaustive over every half
// and bfloat16 bit pattern, scalar and tensor paths, ties against independent references),
// Scalar, Device parsing, dtype names and sizes, visit_dtype, and the type promotion helpers
// checked against tables printed by PyTorch 1.13:
//   torch.promote_types(a, b) and torch.can_cast(a, b) over the ten dtypes in ScalarType order.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_check.h"
#include "promotion_table.h"

using namespace ember;
using ember::test::check_error;

namespace {

constexpr ScalarType kAll[] = {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble};

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// The half nearest to finite x, found by bisection over the (monotone) positive half bit
/// patterns, ties to the even pattern; |x| at or past 65520 (half max + half an ulp) is inf.
/// Independent of half.h's bit tricks.
uint16_t reference_half(float x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return sign | 0x7c00;
  auto value = [](uint16_t h) {  // value of a positive finite half pattern, computed in double
    int e = h >> 10, m = h & 0x3ff;
    return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  };
  uint16_t lo = 0, hi = 0x7bff;  // value(lo) <= a, find the largest such lo
  if (a >= value(hi)) return sign | hi;
  while (hi - lo > 1) {
    uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
    (value(mid) <= a ? lo : hi) = mid;
  }
  double dlo = a - value(lo), dhi = value(hi) - a;
  uint16_t r = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
  return sign | r;
}

/// The bfloat16 nearest to finite x by distance computed in double, ties to the even
/// pattern; candidates are the two patterns whose float values (pattern << 16) bracket x,
/// with 0x7f80 standing for 2^128 so that values past max + half an ulp round to inf.
/// Independent of half.h's add-and-shift rounding.
uint16_t reference_bf16(float x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(x));
  auto value = [](uint32_t p) {  // value of a positive pattern up to 0x7f80, in double
    int e = static_cast<int>(p >> 7), m = static_cast<int>(p & 0x7f);
    return e == 0 ? std::ldexp(m, -133) : std::ldexp(128 + m, e - 134);
  };
  uint32_t lo = (bits_of(static_cast<float>(a)) >> 16);  // truncation: value(lo) <= a
  const uint32_t hi = lo + 1;
  REQUIRE(value(lo) <= a);
  REQUIRE(a < value(hi));
  const double dlo = a - value(lo), dhi = value(hi) - a;
  const uint32_t r = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
  return static_cast<uint16_t>(sign | r);
}

/// A tensor of dtype T holding every 16-bit pattern 0..65535 in order.
template <class T>
Tensor all_patterns(ScalarType t) {
  Tensor x = empty({65536}, t);
  T* p = x.data_ptr<T>();
  for (uint32_t b = 0; b < 65536; ++b) p[b] = T::from_bits(static_cast<uint16_t>(b));
  return x;
}

}  // namespace

TEST_CASE("test_dtype: half -> float -> half is the identity for every bit pattern") {
  int nans = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    Half h = Half::from_bits(static_cast<uint16_t>(b));
    float f = h;
    uint32_t exp = (b >> 10) & 0x1f, mant = b & 0x3ff;
    if (exp == 31 && mant != 0) {  // NaN stays NaN (payload and sign need not survive)
      ++nans;
      REQUIRE(std::isnan(f));
      REQUIRE(std::isnan(static_cast<float>(Half(f))));
      continue;
    }
    // The float value is exact: sign * 2^(e-15) * 1.m, or 2^-24 * m for subnormals.
    double expect = exp == 0 ? std::ldexp(mant, -24) : exp == 31 ? INFINITY : std::ldexp(1024 + mant, exp - 25);
    if (b & 0x8000) expect = -expect;
    INFO("bits " << b);
    REQUIRE(static_cast<double>(f) == expect);
    REQUIRE(std::signbit(f) == static_cast<bool>(b & 0x8000));
    REQUIRE(Half(f).x == b);
  }
  CHECK(nans == 2 * 1023);
}

TEST_CASE("test_dtype: float -> half rounding against an independent reference") {
  // Every midpoint between adjacent halfs (the ties), a point just either side of each, and
  // values around the subnormal/normal and overflow boundaries.
  int checked = 0;
  for (uint16_t b = 0; b < 0x7bff; ++b) {
    double lo = static_cast<float>(Half::from_bits(b)), hi = static_cast<float>(Half::from_bits(b + 1));
    float mid = static_cast<float>((lo + hi) / 2);  // exact in float: halfs have 11-bit significands
    REQUIRE(static_cast<double>(mid) == (lo + hi) / 2);
    for (float x : {mid, std::nextafter(mid, 0.f), std::nextafter(mid, INFINITY)}) {
      INFO("x = " << x);
      REQUIRE(Half(x).x == reference_half(x));
      REQUIRE(Half(-x).x == reference_half(-x));
      ++checked;
    }
  }
  CHECK(checked == 3 * 0x7bff);
  for (float x : {65504.f, 65519.996f, 65520.f, 1e6f, 1e-10f, 1e-8f, 3e-8f, 6.1e-5f, 0.f, -0.f})
    CHECK(Half(x).x == reference_half(x));
  CHECK(Half(INFINITY).x == 0x7c00);
  CHECK(Half(-INFINITY).x == 0xfc00);
  CHECK(std::isnan(static_cast<float>(Half(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(Half(-0.f).x == 0x8000);
  // Conversions from integers and doubles go through float.
  CHECK(Half(3).x == Half(3.0f).x);
  CHECK(Half(int64_t{65519}).x == 0x7bff);
  CHECK(Half(0.1).x == 0x2e66);
}

TEST_CASE("test_dtype: bfloat16 -> float -> bfloat16 for every bit pattern") {
  // Widening is exact on the bits (sign and NaN payload included): the 16 bits are the top
  // of a float. Narrowing gives the pattern back for every non-NaN; a NaN stays a NaN
  // (PyTorch's scalar c10::BFloat16 returns the canonical 0x7fc0, as ember does; its
  // vectorised path returns 0xffff: no payload survives in either).
  int nans = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    INFO("bits " << b);
    BFloat16 v = BFloat16::from_bits(static_cast<uint16_t>(b));
    float f = v;
    REQUIRE(bits_of(f) == b << 16);
    if (std::isnan(f)) {
      ++nans;
      REQUIRE(((b >> 7) & 0xff) == 0xff);
      REQUIRE(std::isnan(static_cast<float>(BFloat16(f))));
      continue;
    }
    REQUIRE(BFloat16(f).x == b);
  }
  CHECK(nans == 2 * 127);
}

TEST_CASE("test_dtype: float -> bfloat16 rounding against an independent reference") {
  // Every midpoint between adjacent positive bfloat16 values (ties: to the even pattern),
  // a float just either side of it, both signs; 0x7f7f..0x7f80 is the overflow tie (to inf).
  int checked = 0;
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const float lo = BFloat16::from_bits(static_cast<uint16_t>(b));
    const double hi = b + 1 == 0x7f80 ? std::ldexp(1.0, 128) : static_cast<double>(BFloat16::from_bits(static_cast<uint16_t>(b + 1)));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: 9 significant bits
    REQUIRE(static_cast<double>(mid) == (lo + hi) / 2);
    for (float x : {mid, std::nextafter(mid, 0.f), std::nextafter(mid, INFINITY)}) {
      if (std::isinf(x)) continue;
      INFO("x = " << x);
      REQUIRE(BFloat16(x).x == reference_bf16(x));
      REQUIRE(BFloat16(-x).x == reference_bf16(-x));
      ++checked;
    }
  }
  CHECK(checked == 3 * 0x7f80);
  CHECK(BFloat16(std::numeric_limits<float>::max()).x == 0x7f80);  // past max + ulp/2: inf
  CHECK(BFloat16(-std::numeric_limits<float>::max()).x == 0xff80);
  CHECK(BFloat16(std::numeric_limits<float>::denorm_min()).x == 0x0000);  // tiny: rounds to 0
  CHECK(BFloat16(-0.f).x == 0x8000);
}

TEST_CASE("test_dtype: tensor conversions of every half and bfloat16 pattern") {
  // The tensor copy path (to(), possibly vectorised) must agree with the scalar conversion
  // bit for bit both ways, for all 65536 patterns of each type, both directions.
  auto float_bits_of = [](const Tensor& f) {
    std::vector<uint32_t> out(static_cast<size_t>(f.numel()));
    std::memcpy(out.data(), f.data_ptr<float>(), out.size() * 4);
    return out;
  };
  Tensor h = all_patterns<Half>(kHalf), b = all_patterns<BFloat16>(kBFloat16);
  std::vector<uint32_t> hf = float_bits_of(h.to(kFloat)), bf = float_bits_of(b.to(kFloat));
  Tensor h2 = h.to(kFloat).to(kHalf), b2 = b.to(kFloat).to(kBFloat16);
  Tensor hd = h.to(kDouble), bd = b.to(kDouble);
  for (uint32_t i = 0; i < 65536; ++i) {
    INFO("bits " << i);
    const float fh = Half::from_bits(static_cast<uint16_t>(i)), fb = BFloat16::from_bits(static_cast<uint16_t>(i));
    REQUIRE(hf[i] == bits_of(fh));
    REQUIRE(bf[i] == i << 16);
    const double dh = hd.data_ptr<double>()[i], db = bd.data_ptr<double>()[i];
    if (std::isnan(fh)) {
      REQUIRE(std::isnan(static_cast<float>(h2.data_ptr<Half>()[i])));
      REQUIRE(std::isnan(dh));
    } else {
      REQUIRE(h2.data_ptr<Half>()[i].x == i);
      REQUIRE(dh == static_cast<double>(fh));
    }
    if (std::isnan(fb)) {
      REQUIRE(std::isnan(static_cast<float>(b2.data_ptr<BFloat16>()[i])));
      REQUIRE(std::isnan(db));
    } else {
      REQUIRE(b2.data_ptr<BFloat16>()[i].x == i);
      REQUIRE(db == static_cast<double>(fb));
    }
  }
  // Narrowing ties through the tensor path: every bfloat16 midpoint (and half midpoint) in
  // one float tensor, to(kBFloat16) / to(kHalf) against the references.
  std::vector<float> ties;
  for (uint32_t i = 0; i < 0x7f7f; ++i)
    ties.push_back(static_cast<float>((static_cast<double>(BFloat16::from_bits(static_cast<uint16_t>(i))) +
                                       static_cast<double>(BFloat16::from_bits(static_cast<uint16_t>(i + 1)))) /
                                      2));
  Tensor t = empty({static_cast<int64_t>(ties.size())}, kFloat);
  std::memcpy(t.data_ptr<float>(), ties.data(), ties.size() * 4);
  Tensor tb = t.to(kBFloat16), tn = (-t).to(kBFloat16), th = t.to(kHalf);
  for (size_t i = 0; i < ties.size(); ++i) {
    INFO("tie " << ties[i]);
    REQUIRE(tb.data_ptr<BFloat16>()[i].x == reference_bf16(ties[i]));
    REQUIRE(tn.data_ptr<BFloat16>()[i].x == reference_bf16(-ties[i]));
    REQUIRE(th.data_ptr<Half>()[i].x == reference_half(ties[i]));
  }
  // Double -> low precision goes through float as PyTorch does (a double just above a
  // bfloat16 tie rounds to float first, landing on the tie, then to even).
  Tensor d = full({1}, 1.00390625 + 1e-12, kDouble);
  CHECK(d.to(kBFloat16).data_ptr<BFloat16>()[0].x == 0x3f80);
}

TEST_CASE("test_dtype: bfloat16 rounding") {
  // torch.tensor([x]).to(torch.bfloat16).view(torch.int16) for each x.
  CHECK(BFloat16(1.0f).x == 0x3f80);
  CHECK(BFloat16(1.00390625f).x == 0x3f80);   // 1 + 2^-8: tie -> even (down)
  CHECK(BFloat16(1.01171875f).x == 0x3f82);   // 1 + 3*2^-8: tie -> even (up)
  CHECK(BFloat16(std::nextafter(1.00390625f, 2.f)).x == 0x3f81);  // just above the tie
  CHECK(BFloat16(std::nextafter(1.01171875f, 0.f)).x == 0x3f81);  // just below the other tie
  CHECK(BFloat16(0.1f).x == 0x3dcd);
  CHECK(BFloat16(-2.5f).x == 0xc020);
  CHECK(BFloat16(3.4e38f).x == 0x7f80);       // rounds up to inf
  CHECK(BFloat16(3.3895e38f).x == 0x7f7f);    // bfloat16 max
  CHECK(BFloat16(1e-40f).x == 0x0001);        // float subnormals keep their top bits
  CHECK(BFloat16(INFINITY).x == 0x7f80);
  CHECK(BFloat16(-INFINITY).x == 0xff80);
  CHECK(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(static_cast<float>(std::numeric_limits<BFloat16>::max()) == 3.3895313892515355e38f);
  CHECK(static_cast<float>(std::numeric_limits<Half>::max()) == 65504.f);
  CHECK(static_cast<float>(std::numeric_limits<Half>::epsilon()) == 0.0009765625f);
  CHECK(static_cast<float>(std::numeric_limits<BFloat16>::epsilon()) == 0.0078125f);
}

TEST_CASE("test_dtype: Scalar conversions") {
  Scalar i = 3;
  CHECK(i.isIntegral(false));
  CHECK(!i.isFloatingPoint());
  CHECK(i.toDouble() == 3.0);
  CHECK(i.to<float>() == 3.0f);
  CHECK(i.to<bool>());
  Scalar big = int64_t{1} << 40;
  CHECK(big.toLong() == int64_t{1} << 40);
  CHECK(big.to<int32_t>() == 0);  // wraps like a C++ conversion (2^40 mod 2^32)
  Scalar d = -2.75;
  CHECK(d.isFloatingPoint());
  CHECK(d.toLong() == -2);  // truncation toward zero
  CHECK(d.to<int>() == -2);
  CHECK(d.toFloat() == -2.75f);
  CHECK(d.to<Half>().x == Half(-2.75f).x);
  CHECK(static_cast<float>(Scalar(0.1).to<BFloat16>()) == static_cast<float>(BFloat16(0.1f)));
  Scalar b = true;
  CHECK(b.isBoolean());
  CHECK(b.isIntegral(true));
  CHECK(!b.isIntegral(false));
  CHECK(b.toLong() == 1);
  CHECK(b.toDouble() == 1.0);
  CHECK(Scalar(0.0).toBool() == false);
  CHECK(Scalar(0.5).toBool() == true);
  CHECK(Scalar(Half(1.5f)).isFloatingPoint());
  CHECK(Scalar(Half(1.5f)).toDouble() == 1.5);
  CHECK(Scalar(BFloat16(2.0f)).toDouble() == 2.0);
  CHECK(Scalar(1.5f).toDouble() == 1.5);
  CHECK(Scalar(uint8_t{200}).toLong() == 200);
  CHECK(Scalar().toLong() == 0);
  CHECK((-Scalar(2)).toLong() == -2);
  CHECK((-Scalar(2.5)).toDouble() == -2.5);
  CHECK((-Scalar(2)).isIntegral(false));
  std::ostringstream s;
  s << Scalar(3) << ' ' << Scalar(2.5) << ' ' << Scalar(true);
  CHECK(s.str() == "3 2.5 true");
}

TEST_CASE("test_dtype: names, sizes and visit_dtype") {
  const char* names[] = {"torch.bool", "torch.uint8", "torch.int8", "torch.int16", "torch.int32",
                         "torch.int64", "torch.float16", "torch.bfloat16", "torch.float32", "torch.float64"};
  const char* cpp[] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double"};
  const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  for (int k = 0; k < 10; ++k) {
    ScalarType t = kAll[k];
    CHECK(std::string(dtype_name(t)) == names[k]);
    CHECK(std::string(scalar_type_name(t)) == cpp[k]);
    CHECK(element_size(t) == sizes[k]);
    size_t sz = visit_dtype(t, [&]<typename T>() { return sizeof(T); });
    CHECK(sz == sizes[k]);
    CHECK(visit_dtype(t, [&]<typename T>() { return dtype_of<T>; }) == t);
    CHECK(ember::is_floating_point(t) == (k >= 6));
    CHECK(is_integral(t, false) == (k >= 1 && k <= 5));
    CHECK(is_integral(t, true) == (k <= 5));
    CHECK(zeros({1}, t).element_size() == static_cast<int64_t>(sizes[k]));
  }
  std::ostringstream s;
  s << kFloat;
  CHECK(s.str() == "Float");
  check_error([] { visit_float_dtype(kLong, "my_op", [&]<typename T>() {}); }, "\"my_op\" not implemented for 'Long'");
  CHECK(visit_float_dtype(kHalf, "x", [&]<typename T>() { return std::is_same_v<T, Half>; }));
  check_error([] { element_size(ScalarType::Undefined); }, "undefined dtype");
  CHECK((std::is_same_v<opmath_t<Half>, float> && std::is_same_v<opmath_t<BFloat16>, float> &&
         std::is_same_v<opmath_t<double>, double> && std::is_same_v<acc_t<float>, double> &&
         std::is_same_v<acc_t<int8_t>, int64_t> && std::is_same_v<acc_t<bool>, int64_t>));
  CHECK(get_default_dtype() == kFloat);
  check_error([] { set_default_dtype(kLong); }, "only floating-point types are supported as the default type");
}

TEST_CASE("test_dtype: Device parsing") {
  Device c("cuda:1");
  CHECK(c.is_cuda());
  CHECK(c.index() == 1);
  CHECK(c.has_index());
  CHECK(c.str() == "cuda:1");
  Device g("cuda");
  CHECK(g.is_cuda());
  CHECK(!g.has_index());
  CHECK(g.str() == "cuda");
  CHECK(Device("cpu").is_cpu());
  CHECK(Device("cpu") == Device(kCPU));
  CHECK(Device("cpu:0").index() == 0);
  CHECK(Device("cuda:0") == Device(kCUDA, 0));
  CHECK(Device("cuda:0") != Device(kCUDA, 1));
  CHECK(Device("cuda:0") != Device(kCUDA));
  CHECK(Device("cuda:12").index() == 12);
  std::ostringstream s;
  s << Device(kCUDA, 3) << ' ' << kCPU;
  CHECK(s.str() == "cuda:3 cpu");
  // PyTorch's texts: torch.device("gpu"), torch.device(""), torch.device("cuda:"), ...
  check_error([] { Device("gpu"); }, "Expected one of cpu, cuda");
  check_error([] { Device("gpu"); }, "device type at start of device string: gpu");
  check_error([] { Device(""); }, "Device string must not be empty");
  check_error([] { Device("cuda:"); }, "Invalid device string: 'cuda:'");
  check_error([] { Device("cuda:01"); }, "Invalid device string: 'cuda:01'");
  check_error([] { Device("cuda:1:2"); }, "Invalid device string: 'cuda:1:2'");
  check_error([] { Device("cuda:-1"); }, "Invalid device string: 'cuda:-1'");
  check_error([] { Device(":1"); }, "Invalid device string: ':1'");
  check_error([] { Device("cuda: 1"); }, "Invalid device string: 'cuda: 1'");
  check_error([] { Device("cuda:99999999999"); }, "Could not parse device index '99999999999'");
  check_error([] { Device("cuda:128"); }, "Could not parse device index '128' in device string 'cuda:128'");
}

TEST_CASE("test_dtype: promote_types matches torch.promote_types") {
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b) {
      INFO(kAll[a] << " + " << kAll[b]);
      CHECK(promote_types(kAll[a], kAll[b]) == ember::test::kExpected[a][b]);
    }
}

TEST_CASE("test_dtype: can_cast matches torch.can_cast") {
  // Row = from, column = to; '1' where torch.can_cast(from, to).
  const char* expected[10] = {"1111111111", "0111111111", "0111111111", "0111111111", "0111111111",
                              "0111111111", "0000001111", "0000001111", "0000001111", "0000001111"};
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b) {
      INFO(kAll[a] << " -> " << kAll[b]);
      CHECK(can_cast(kAll[a], kAll[b]) == (expected[a][b] == '1'));
    }
  check_error([] { check_can_cast(kFloat, kLong); }, "result type Float can't be cast to the desired output type Long");
  check_error([] { check_can_cast(kLong, kBool); }, "result type Long can't be cast to the desired output type Bool");
  check_can_cast(kLong, kFloat);  // no throw
}

TEST_CASE("test_dtype: result_type matches torch.result_type") {
  // Dimensioned tensors beat 0-dim tensors, which beat scalars, within a category; a higher
  // category always wins (values printed by torch.result_type).
  CHECK(result_type(ones({1}, kInt), tensor(1.5, kDouble)) == kDouble);
  CHECK(result_type(ones({1}, kHalf), tensor(1.5, kDouble)) == kHalf);
  CHECK(result_type(ones({1}, kByte), tensor(1, kLong)) == kByte);
  CHECK(result_type(ones({1}, kBool), tensor(1, kInt)) == kInt);
  CHECK(result_type(tensor(1, kInt), tensor(1., kHalf)) == kHalf);
  CHECK(result_type(ones({1}, kChar), ones({1}, kByte)) == kShort);
  CHECK(result_type(ones({1}, kBFloat16), ones({1}, kHalf)) == kFloat);
  CHECK(result_type(ones({1}, kInt), Scalar(2.5)) == kFloat);
  CHECK(result_type(ones({1}, kInt), Scalar(7)) == kInt);
  CHECK(result_type(ones({1}, kHalf), Scalar(2.5)) == kHalf);
  CHECK(result_type(ones({1}, kBool), Scalar(3)) == kLong);
  CHECK(result_type(ones({1}, kBool), Scalar(true)) == kBool);
  CHECK(result_type(ones({1}, kByte), Scalar(true)) == kByte);
  CHECK(result_type(tensor(1, kLong), Scalar(2.5)) == kFloat);
  CHECK(result_type(Scalar(2.5), ones({1}, kInt)) == kFloat);
  CHECK(result_type({ones({1}, kInt), ones({2}, kChar), tensor(1.0, kDouble)}) == kDouble);
  CHECK(promote_to_float(kLong) == kFloat);
  CHECK(promote_to_float(kHalf) == kHalf);
  CHECK(promote_to_float(kBool) == kFloat);
}
