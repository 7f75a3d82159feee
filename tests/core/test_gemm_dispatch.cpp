// cpu::gemm's instruction-set variants (gemm_isa.h): every variant this build and CPU can
// run, against gemm_reference on odd shapes, all four transposes, alpha/beta, padded
// leading dimensions and products large enough to be split into blocks; and the selection
// API itself.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/cpu/gemm.h"
#include "ember/core/cpu/gemm_isa.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_error;

namespace {

constexpr cpu::GemmIsa kAll[] = {cpu::GemmIsa::kGeneric, cpu::GemmIsa::kAvx2, cpu::GemmIsa::kAvx512};

/// Restores the instruction set in use when the test started.
struct IsaGuard {
  cpu::GemmIsa saved = cpu::gemm_isa();
  ~IsaGuard() { cpu::set_gemm_isa(saved); }
};

std::vector<cpu::GemmIsa> available_isas() {
  std::vector<cpu::GemmIsa> v;
  for (cpu::GemmIsa isa : kAll)
    if (cpu::gemm_isa_available(isa)) v.push_back(isa);
  return v;
}

/// Deterministic data in [-1, 1) (a linear congruential generator); for Half and BFloat16
/// small integers, so that their products are exact in float and match the reference.
template <class T>
std::vector<T> data(size_t n, uint64_t seed) {
  std::vector<T> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = static_cast<double>(seed >> 11) / 4503599627370496.0 - 1.0;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      x = static_cast<T>(u);
    else
      x = static_cast<T>(static_cast<float>(static_cast<int>(u * 4)));
  }
  return v;
}

double as_double(float v) { return v; }
double as_double(double v) { return v; }
double as_double(Half v) { return static_cast<float>(v); }
double as_double(BFloat16 v) { return static_cast<float>(v); }

/// gemm (with the active kernels) and gemm_reference on the same data, leading dimensions
/// padded by `pad`; every element of C is compared, padding included (neither may touch it).
template <class T>
void check_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t pad) {
  const uint64_t seed = static_cast<uint64_t>(m * 1000003 + n * 1009 + k * 7 + ta * 2 + tb + pad * 31);
  const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
  std::vector<T> a = data<T>(static_cast<size_t>((ta ? k : m) * lda), seed);
  std::vector<T> b = data<T>(static_cast<size_t>((tb ? n : k) * ldb), seed + 1);
  std::vector<T> c = data<T>(static_cast<size_t>(m * ldc), seed + 2);
  std::vector<T> expected = c;
  using M = opmath_t<T>;
  cpu::gemm<T>(ta, tb, m, n, k, static_cast<M>(alpha), a.data(), lda, b.data(), ldb, static_cast<M>(beta),
               c.data(), ldc);
  cpu::gemm_reference<T>(ta, tb, m, n, k, static_cast<M>(alpha), a.data(), lda, b.data(), ldb,
                         static_cast<M>(beta), expected.data(), ldc);
  // |C| <= |alpha| k + |beta| with data in [-1, 1); float rounding grows about with k.
  const double eps = std::is_same_v<T, double> ? 1e-13 : std::is_same_v<T, float> ? 1e-5 : 0.0;
  const double tol = eps * static_cast<double>(k + 1) * (std::fabs(alpha) + std::fabs(beta) + 1);
  int bad = 0;
  for (size_t i = 0; i < c.size(); ++i)
    if (!(std::fabs(as_double(c[i]) - as_double(expected[i])) <= tol) && bad++ < 3) {
      INFO(cpu::gemm_isa_name(cpu::gemm_isa()) << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta
                                               << " tb=" << tb << " pad=" << pad << " element " << i);
      CHECK(as_double(c[i]) == doctest::Approx(as_double(expected[i])));
    }
  CHECK(bad == 0);
}

template <class T>
void check_shapes(int64_t pad, double alpha, double beta) {
  const int64_t sizes[] = {1, 3, 17, 33};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : sizes) check_gemm<T>(ta, tb, m, n, k, alpha, beta, pad);
}

}  // namespace

TEST_CASE("gemm_isa: generic is always available, names, and the default") {
  CHECK(cpu::gemm_isa_available(cpu::GemmIsa::kGeneric));
  CHECK(std::string(cpu::gemm_isa_name(cpu::GemmIsa::kGeneric)) == "generic");
  CHECK(std::string(cpu::gemm_isa_name(cpu::GemmIsa::kAvx2)) == "avx2");
  CHECK(std::string(cpu::gemm_isa_name(cpu::GemmIsa::kAvx512)) == "avx512");
  CHECK(cpu::gemm_isa_available(cpu::gemm_isa()));
  // Without EMBER_GEMM_ISA the default is AVX2 where it runs (see gemm_isa.h).
  if (std::getenv("EMBER_GEMM_ISA") == nullptr)
    CHECK(cpu::gemm_isa() ==
          (cpu::gemm_isa_available(cpu::GemmIsa::kAvx2) ? cpu::GemmIsa::kAvx2 : cpu::GemmIsa::kGeneric));
  MESSAGE("GEMM variants available here: " << available_isas().size());
}

TEST_CASE("set_gemm_isa switches the kernels and refuses unavailable ones") {
  IsaGuard guard;
  for (cpu::GemmIsa isa : kAll) {
    if (cpu::gemm_isa_available(isa)) {
      cpu::set_gemm_isa(isa);
      CHECK(cpu::gemm_isa() == isa);
    } else {
      check_error([&] { cpu::set_gemm_isa(isa); }, "GEMM kernel");
    }
  }
}

TEST_CASE("every GEMM variant matches the reference: odd shapes, transposes") {
  IsaGuard guard;
  for (cpu::GemmIsa isa : available_isas()) {
    cpu::set_gemm_isa(isa);
    INFO("isa " << cpu::gemm_isa_name(isa));
    check_shapes<float>(0, 1.0, 0.0);
    check_shapes<double>(0, 1.0, 0.0);
  }
}

TEST_CASE("every GEMM variant: alpha, beta, padded leading dimensions, Half and BFloat16") {
  IsaGuard guard;
  for (cpu::GemmIsa isa : available_isas()) {
    cpu::set_gemm_isa(isa);
    INFO("isa " << cpu::gemm_isa_name(isa));
    check_shapes<float>(3, 0.5, 2.0);
    check_shapes<double>(5, -1.5, 1.0);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm<float>(ta, tb, 65, 7, 40, 2.0, -0.25, 1);
        check_gemm<Half>(ta, tb, 7, 33, 65, 2.0, 3.0, 2);
        check_gemm<BFloat16>(ta, tb, 33, 7, 17, 1.0, 1.0, 1);
      }
    check_gemm<float>(false, false, 7, 9, 0, 1.0, 2.0, 0);  // k == 0: C = beta C
    check_gemm<double>(true, false, 7, 7, 7, 0.0, 3.0, 0);  // alpha == 0
  }
}

TEST_CASE("every GEMM variant: products split into parallel blocks") {
  IsaGuard guard;
  for (cpu::GemmIsa isa : available_isas()) {
    cpu::set_gemm_isa(isa);
    INFO("isa " << cpu::gemm_isa_name(isa));
    check_gemm<float>(false, false, 150, 131, 129, 1.0, 0.0, 0);  // by rows, 2.5M multiply-adds
    check_gemm<float>(true, true, 37, 300, 200, 0.5, 1.0, 2);     // by columns
    check_gemm<double>(false, true, 129, 140, 130, -1.0, 0.5, 1);
  }
}

TEST_CASE("every GEMM variant: beta == 0 ignores NaN in C") {
  IsaGuard guard;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (cpu::GemmIsa isa : available_isas()) {
    cpu::set_gemm_isa(isa);
    // [1 2; 3 4] @ [5 6; 7 8] = [19 22; 43 50]
    std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8}, c(4, nan);
    cpu::gemm<float>(false, false, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
    CHECK(c == std::vector<float>{19, 22, 43, 50});
    // A NaN in A propagates (no variant skips it): row 0 of C is NaN, row 1 is not.
    std::vector<double> ad{nan, 1, 2, 3}, bd{1, 1, 1, 1}, cd(4, 0.0);
    cpu::gemm<double>(false, false, 2, 2, 2, 1.0, ad.data(), 2, bd.data(), 2, 0.0, cd.data(), 2);
    CHECK(std::isnan(cd[0]));
    CHECK(std::isnan(cd[1]));
    CHECK(cd[2] == 5.0);
    CHECK(cd[3] == 5.0);
  }
}
