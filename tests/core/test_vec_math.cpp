// SIMD float32 math (core/cpu/vec_math.h) and the float32 kernels that use it (exp, erf,
// tanh, sigmoid, gelu): ulp error against std:: in double over the whole float range and the
// special values (inf, NaN, overflow, underflow, denormals, -0), and the tensor ops on odd
// sizes, non-contiguous, transposed and broadcast inputs against the float64 path and
// against themselves (an element's result must not depend on where it sits).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ember/core/cpu/vec_math.h"
#include "op_check.h"

using namespace ember;
namespace vec = ember::cpu::vec;

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();

/// Distance in ulps between two floats of the same sign class (ordered integer view).
int64_t ulp_distance(float a, float b) {
  auto ord = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
  };
  int64_t d = ord(a) - ord(b);
  return d < 0 ? -d : d;
}

/// Inputs spanning the float range: every 4099th bit pattern (both signs, denormals, inf,
/// NaN patterns) plus the special values and the ends of exp's range.
std::vector<float> wide_inputs() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (float f : {0.0f, -0.0f, kInfF, -kInfF, kNanF, -kNanF, 1e-45f, -1e-45f, 1e-38f, 88.72283f, 88.7228394f,
                  88.73f, 89.0f, -87.33f, -88.0f, -103.0f, -103.97f, -104.0f, -150.0f, 0.921875f, -0.921875f,
                  0.625f, -0.625f, 4.0f, -4.0f, 3.99f, 9.0f, 1e30f, -1e30f, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::lowest()})
    v.push_back(f);
  while (v.size() % vec::kWidth) v.push_back(0.5f);
  return v;
}

/// Max ulp error of vf against ref (computed in double, rounded to float) over `xs`; NaN
/// must match NaN exactly.
template <class VF, class Ref>
int64_t max_ulp(const std::vector<float>& xs, const VF& vf, const Ref& ref) {
  int64_t worst = 0;
  alignas(32) float out[vec::kWidth];
  for (size_t i = 0; i < xs.size(); i += vec::kWidth) {
    vec::store(out, vf(vec::load(&xs[i])));
    for (int64_t j = 0; j < vec::kWidth; ++j) {
      float x = xs[i + j];
      float want = static_cast<float>(ref(static_cast<double>(x)));
      INFO("x = " << x << " got " << out[j] << " want " << want);
      if (std::isnan(want) || std::isnan(out[j])) {
        CHECK(std::isnan(want) == std::isnan(out[j]));
        continue;
      }
      // Zeros of either sign are the same value; the sign of a zero is checked below.
      int64_t d = (want == 0.0f && out[j] == 0.0f) ? 0 : ulp_distance(out[j], want);
      worst = std::max(worst, d);
    }
  }
  return worst;
}

float first(vec::f8 v) { return v[0]; }

}  // namespace

TEST_CASE("test_vec_math: exp, erf, tanh within 2 ulp of std:: over the float range") {
  std::vector<float> xs = wide_inputs();
  CHECK(max_ulp(xs, [](vec::f8 v) { return vec::exp(v); }, [](double x) { return std::exp(x); }) <= 2);
  CHECK(max_ulp(xs, [](vec::f8 v) { return vec::erf(v); }, [](double x) { return std::erf(x); }) <= 2);
  CHECK(max_ulp(xs, [](vec::f8 v) { return vec::tanh(v); }, [](double x) { return std::tanh(x); }) <= 2);
  // Dense sampling where the polynomials switch branches.
  std::vector<float> dense;
  for (float x = -6.0f; x < 6.0f; x += 1.0f / 4096) dense.push_back(x);
  while (dense.size() % vec::kWidth) dense.push_back(0.0f);
  CHECK(max_ulp(dense, [](vec::f8 v) { return vec::exp(v); }, [](double x) { return std::exp(x); }) <= 2);
  CHECK(max_ulp(dense, [](vec::f8 v) { return vec::erf(v); }, [](double x) { return std::erf(x); }) <= 2);
  CHECK(max_ulp(dense, [](vec::f8 v) { return vec::tanh(v); }, [](double x) { return std::tanh(x); }) <= 2);
}

TEST_CASE("test_vec_math: sigmoid and gelu follow the scalar float formulas") {
  std::vector<float> xs = wide_inputs();
  // sigmoid = 1 / (1 + e^{-x}) as the scalar float path computes it (0 once e^{-x} overflows).
  CHECK(max_ulp(xs, [](vec::f8 v) { return vec::sigmoid(v); },
                [](double x) {
                  float f = static_cast<float>(x);
                  return 1.0f / (1.0f + std::exp(-f));
                }) <= 4);
  // gelu: x Phi(x) within a few ulp of the exact value, or (where 1 + erf cancels, x < -1)
  // within the absolute error the float formula itself carries: |x| ulp(1) / 2.
  for (bool tanh_form : {false, true}) {
    INFO("tanh form: " << tanh_form);
    alignas(32) float out[vec::kWidth];
    for (size_t i = 0; i < xs.size(); i += vec::kWidth) {
      vec::f8 in = vec::load(&xs[i]);
      vec::store(out, tanh_form ? vec::gelu_tanh(in) : vec::gelu(in));
      for (int64_t j = 0; j < vec::kWidth; ++j) {
        double x = xs[i + j];
        double want = tanh_form ? 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
                                : 0.5 * x * (1 + std::erf(x * 0.7071067811865476));
        float wf = static_cast<float>(want);
        INFO("x = " << x << " got " << out[j] << " want " << want);
        if (std::isnan(wf) || std::isnan(out[j]) || std::isinf(x)) {
          // -inf: 0.5 * -inf * (1 + -1) is NaN in both the scalar and the SIMD form.
          if (!std::isinf(x)) CHECK(std::isnan(wf) == std::isnan(out[j]));
          continue;
        }
        if (std::abs(x) > 1e30) continue;  // x^3 overflows in float in the tanh form
        double tol = x < -1.0 ? std::abs(x) * 6e-8 * 4 : 4 * std::abs(static_cast<double>(wf)) * 1.2e-7;
        CHECK(std::abs(out[j] - want) <= tol + 1e-44);
      }
    }
  }
}

TEST_CASE("test_vec_math: special values") {
  auto one = [](vec::f8 (*f)(vec::f8), float x) { return first(f(vec::splat(x))); };
  auto exp_ = [](vec::f8 v) { return vec::exp(v); };
  auto erf_ = [](vec::f8 v) { return vec::erf(v); };
  auto tanh_ = [](vec::f8 v) { return vec::tanh(v); };
  auto sig_ = [](vec::f8 v) { return vec::sigmoid(v); };
  CHECK(one(exp_, kInfF) == kInfF);
  CHECK(one(exp_, -kInfF) == 0.0f);
  CHECK(std::isnan(one(exp_, kNanF)));
  CHECK(one(exp_, 0.0f) == 1.0f);
  CHECK(one(exp_, -0.0f) == 1.0f);
  CHECK(one(exp_, 88.8f) == kInfF);
  CHECK(one(exp_, 88.72283f) == std::exp(88.72283f));
  CHECK(one(exp_, -100.0f) == std::exp(-100.0f));  // denormal, correctly rounded here
  CHECK(std::fpclassify(one(exp_, -100.0f)) == FP_SUBNORMAL);
  CHECK(one(exp_, -104.0f) == 0.0f);
  CHECK(one(exp_, 1e-45f) == 1.0f);
  CHECK(one(erf_, kInfF) == 1.0f);
  CHECK(one(erf_, -kInfF) == -1.0f);
  CHECK(std::isnan(one(erf_, kNanF)));
  CHECK(std::signbit(one(erf_, -0.0f)));
  CHECK(one(erf_, 1e-45f) == std::erf(1e-45f));
  CHECK(one(erf_, 5.0f) == 1.0f);
  CHECK(one(tanh_, kInfF) == 1.0f);
  CHECK(one(tanh_, -kInfF) == -1.0f);
  CHECK(std::isnan(one(tanh_, kNanF)));
  CHECK(std::signbit(one(tanh_, -0.0f)));
  CHECK(one(tanh_, 1e30f) == 1.0f);
  CHECK(one(sig_, kInfF) == 1.0f);
  CHECK(one(sig_, -kInfF) == 0.0f);
  CHECK(std::isnan(one(sig_, kNanF)));
  CHECK(one(sig_, 0.0f) == 0.5f);
}

namespace {

struct MapCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  double atol;
};

std::vector<MapCase> map_cases() {
  return {
      {"exp", [](const Tensor& t) { return t.exp(); }, 0},
      {"erf", [](const Tensor& t) { return t.erf(); }, 0},
      {"tanh", [](const Tensor& t) { return t.tanh(); }, 0},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }, 0},
      {"gelu", [](const Tensor& t) { return gelu(t); }, 1e-6},
      {"gelu_tanh", [](const Tensor& t) { return gelu(t, "tanh"); }, 1e-6},
  };
}

}  // namespace

TEST_CASE("test_vec_math: float32 ops on odd sizes, strided, transposed and broadcast inputs") {
  for (const MapCase& c : map_cases()) {
    INFO("op: " << std::string(c.name));
    for (int64_t n : {1, 7, 8, 9, 15, 17, 1000, 100003}) {
      INFO("n = " << n);
      Tensor x = randn({n}) * 4;
      Tensor y = c.op(x);
      REQUIRE(y.dtype() == kFloat);
      // float64 path (std::) rounded to float.
      ember::test::check_close(y, c.op(x.to(kDouble)).to(kFloat), c.atol, 3e-7);
      // Same values at other positions: every element is computed by the same code.
      Tensor shifted = c.op(cat({zeros({3}), x}).slice(0, 3));
      CHECK(equal(shifted, y));
    }
    // Special values inside a tensor, at odd positions and in the tail.
    Tensor special = tensor(std::vector<float>{0.5f, kInfF, -kInfF, kNanF, -0.0f, 1e-45f, 88.8f, -104.0f, 3.0f,
                                               -3.0f, 1e-40f});
    Tensor got = c.op(special), want = c.op(special.to(kDouble)).to(kFloat);
    std::vector<double> g = ember::test::values(got), w = ember::test::values(want);
    for (size_t i = 0; i < g.size(); ++i) {
      INFO("i = " << i);
      if (std::isnan(w[i])) {
        CHECK(std::isnan(g[i]));
      } else {
        CHECK((g[i] == w[i] || std::abs(g[i] - w[i]) <= std::abs(w[i]) * 3e-7 + c.atol));
      }
    }
    // Transposed (non-contiguous), a strided slice, and a broadcast (stride 0) input.
    Tensor m = randn({37, 29}) * 3;
    Tensor ref = c.op(m.contiguous());
    CHECK(equal(c.op(m.t()), ref.t()));
    Tensor wide = randn({37, 58}) * 3;
    Tensor sliced = wide.slice(1, 0, 58, 2);
    REQUIRE(!sliced.is_contiguous());
    CHECK(equal(c.op(sliced), c.op(sliced.contiguous())));
    Tensor row = randn({1, 29}) * 3;
    Tensor b = row.expand({37, 29});
    CHECK(equal(c.op(b), c.op(row).expand({37, 29})));
    // In place on a non-contiguous view.
    Tensor mm = m.clone();
    Tensor view = mm.t();
    CHECK(equal(c.op(view), ref.t()));
  }
}

TEST_CASE("test_vec_math: the result does not depend on the thread count") {
  int saved = get_num_threads();
  Tensor x = randn({1 << 18}) * 5;
  set_num_threads(1);
  Tensor one = gelu(x), e1 = x.exp();
  set_num_threads(2);
  Tensor two = gelu(x), e2 = x.exp();
  set_num_threads(saved);
  CHECK(equal(one, two));
  CHECK(equal(e1, e2));
}

TEST_CASE("test_vec_math: gelu backward uses the same float32 kernels") {
  Tensor base = randn({1001}, kDouble) * 3;
  for (const char* approx : {"none", "tanh"}) {
    INFO("approximate: " << std::string(approx));
    Tensor x = base.clone().requires_grad_(true);
    Tensor x32 = base.to(kFloat).requires_grad_(true);
    gelu(x, approx).sum().backward();
    gelu(x32, approx).sum().backward();
    ember::test::check_close(x32.grad(), x.grad().to(kFloat), 2e-6, 2e-6);
  }
}
