// cpu::gemm's float/double product (gemm.cpp) on every micro-kernel set this build and CPU
// can run (gemm_isa.h), plus the AVX-512 tile shapes emulated with AVX2 (so their blocking
// is tested on CPUs without AVX-512), against gemm_reference: odd shapes on both sides of
// every blocking boundary, all four transposes, alpha/beta (beta == 0 with NaN in C),
// padded leading dimensions, products split over threads (bitwise the same for any thread
// count); and the selection API itself.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ember/core/cpu/gemm.h"
#include "ember/core/cpu/gemm_isa.h"
#include "ember/core/cpu/gemm_kernel.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_error;

namespace {

constexpr cpu::GemmIsa kAll[] = {cpu::GemmIsa::kAvx2, cpu::GemmIsa::kAvx512, cpu::GemmIsa::kAvx512Bf16};

/// Restores the instruction set (and the thread count) in use when the test started.
struct IsaGuard {
  cpu::GemmIsa saved = cpu::gemm_isa();
  int threads = get_num_threads();
  ~IsaGuard() {
    cpu::gemm_detail::use_kernels_for_testing(nullptr);
    cpu::set_gemm_isa(saved);
    set_num_threads(threads);
  }
};

std::vector<cpu::GemmIsa> available_isas() {
  std::vector<cpu::GemmIsa> v;
  for (cpu::GemmIsa isa : kAll)
    if (cpu::gemm_isa_available(isa)) v.push_back(isa);
  return v;
}

/// Every kernel set to test: each available instruction set, and the AVX-512 shapes on AVX2.
struct KernelSet {
  std::string name;
  std::function<void()> use;
};
std::vector<KernelSet> kernel_sets() {
  std::vector<KernelSet> v;
  for (cpu::GemmIsa isa : available_isas())
    v.push_back({cpu::gemm_isa_name(isa), [isa] {
                   cpu::gemm_detail::use_kernels_for_testing(nullptr);
                   cpu::set_gemm_isa(isa);
                 }});
  if (cpu::gemm_isa_available(cpu::GemmIsa::kAvx2) && cpu::gemm_detail::avx2_wide_kernels() != nullptr)
    v.push_back({"avx2_wide", [] { cpu::gemm_detail::use_kernels_for_testing(cpu::gemm_detail::avx2_wide_kernels()); }});
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
void check_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t pad,
                bool nan_c = false) {
  const uint64_t seed = static_cast<uint64_t>(m * 1000003 + n * 1009 + k * 7 + ta * 2 + tb + pad * 31);
  const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
  std::vector<T> a = data<T>(static_cast<size_t>((ta ? k : m) * lda), seed);
  std::vector<T> b = data<T>(static_cast<size_t>((tb ? n : k) * ldb), seed + 1);
  std::vector<T> c = data<T>(static_cast<size_t>(m * ldc), seed + 2);
  if (nan_c)  // the matrix itself (not the padding) NaN: beta == 0 must not read it
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i * ldc + j)] = static_cast<T>(NAN);
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
      INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta
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

TEST_CASE("gemm_isa: names, availability and the default") {
  CHECK(std::string(cpu::gemm_isa_name(cpu::GemmIsa::kAvx2)) == "avx2");
  CHECK(std::string(cpu::gemm_isa_name(cpu::GemmIsa::kAvx512)) == "avx512");
  CHECK(std::string(cpu::gemm_isa_name(cpu::GemmIsa::kAvx512Bf16)) == "avx512_bf16");
  // avx512_bf16 is AVX-512 plus vdpbf16ps: never available without avx512.
  if (cpu::gemm_isa_available(cpu::GemmIsa::kAvx512Bf16)) CHECK(cpu::gemm_isa_available(cpu::GemmIsa::kAvx512));
#if defined(__x86_64__)
  CHECK(cpu::gemm_isa_available(cpu::GemmIsa::kAvx2));  // the build's baseline is x86-64-v3
#endif
  CHECK(cpu::gemm_isa_available(cpu::gemm_isa()));
  // Without EMBER_GEMM_ISA the default is the widest that runs (see gemm_isa.h).
  if (std::getenv("EMBER_GEMM_ISA") == nullptr)
    CHECK(cpu::gemm_isa() == (cpu::gemm_isa_available(cpu::GemmIsa::kAvx512Bf16) ? cpu::GemmIsa::kAvx512Bf16
                              : cpu::gemm_isa_available(cpu::GemmIsa::kAvx512)   ? cpu::GemmIsa::kAvx512
                                                                                 : cpu::GemmIsa::kAvx2));
  MESSAGE("GEMM kernel sets tested here: " << kernel_sets().size());
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

TEST_CASE("every GEMM kernel set matches the reference: odd shapes, transposes") {
  IsaGuard guard;
  for (const KernelSet& ks : kernel_sets()) {
    ks.use();
    INFO("kernels " << ks.name);
    check_shapes<float>(0, 1.0, 0.0);
    check_shapes<double>(0, 1.0, 0.0);
  }
}

TEST_CASE("every GEMM kernel set: alpha, beta, padded leading dimensions, Half and BFloat16") {
  IsaGuard guard;
  for (const KernelSet& ks : kernel_sets()) {
    ks.use();
    INFO("kernels " << ks.name);
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
    check_gemm<float>(false, false, 7, 9, 0, 1.0, 0.0, 2, true);  // k == 0, beta == 0: C = 0
  }
}

TEST_CASE("every GEMM kernel set: sizes across the cache blocks and edge tiles") {
  IsaGuard guard;
  for (const KernelSet& ks : kernel_sets()) {
    ks.use();
    INFO("kernels " << ks.name);
    // Depth over one and two blocks (kc 256 or 192), rows over a row block (mc 144),
    // columns over the register tile, in place (small m or n) and packed.
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm<float>(ta, tb, 257, 65, 513, 1.0, 0.0, 0);
        check_gemm<float>(ta, tb, 65, 257, 257, 0.5, 1.0, 3);
        check_gemm<float>(ta, tb, 7, 130, 300, 1.0, 0.0, 1);
        check_gemm<float>(ta, tb, 150, 9, 385, -2.0, 0.5, 0);
        check_gemm<double>(ta, tb, 145, 67, 260, 1.0, -1.0, 2);
        check_gemm<double>(ta, tb, 13, 33, 193, 1.0, 0.0, 0);
      }
    // Matrix-vector products (m == 1 or n == 1: dot products or axpy sweeps, no tiles).
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm<float>(ta, tb, 300, 1, 257, 1.0, 0.0, 2, true);
        check_gemm<float>(ta, tb, 1, 2100, 300, -0.5, 2.0, 1);
        check_gemm<double>(ta, tb, 1, 1, 1000, 1.0, 1.0, 0);
        check_gemm<double>(ta, tb, 70, 1, 33, 2.0, 0.0, 3);
      }
    // Wider than one column block of the shared packed B (2048 doubles, 4096 floats).
    check_gemm<double>(false, false, 9, 2100, 300, 1.0, 0.0, 1);
    check_gemm<float>(true, true, 30, 4200, 260, 1.0, 2.0, 0);
    // The small shapes of a CNN and an MLP: conv as 64x288 . 288x196, 32x784 . 784x9,
    // 128x784 . 784x512, and its backward products with transposed operands.
    check_gemm<float>(false, false, 64, 196, 288, 1.0, 0.0, 0);
    check_gemm<float>(false, false, 32, 9, 784, 1.0, 0.0, 0);
    check_gemm<float>(false, true, 128, 512, 784, 1.0, 0.0, 0);
    check_gemm<float>(true, false, 784, 512, 128, 1.0, 0.0, 0);
    check_gemm<float>(false, false, 128, 784, 512, 1.0, 0.0, 0);
  }
}

TEST_CASE("every GEMM kernel set: beta == 0 ignores NaN in C") {
  IsaGuard guard;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const KernelSet& ks : kernel_sets()) {
    ks.use();
    INFO("kernels " << ks.name);
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
    // Full and edge tiles, packed and in place, over several depth blocks.
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check_gemm<float>(ta, tb, 33, 17, 300, 1.0, 0.0, 1, true);
        check_gemm<float>(ta, tb, 150, 70, 65, 2.0, 0.0, 0, true);
        check_gemm<double>(ta, tb, 13, 40, 260, 1.0, 0.0, 2, true);
      }
  }
}

namespace {
/// gemm with 1, 2 and 3 threads on the same data: bitwise the same C each time.
template <class T>
void check_thread_invariance(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double beta) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  std::vector<T> a = data<T>(static_cast<size_t>(m * k), 11), b = data<T>(static_cast<size_t>(k * n), 12);
  const std::vector<T> c0 = data<T>(static_cast<size_t>(m * n), 13);
  std::vector<T> first;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<T> c = c0;
    cpu::gemm<T>(ta, tb, m, n, k, T(1.5), a.data(), lda, b.data(), ldb, static_cast<T>(beta), c.data(), n);
    if (first.empty())
      first = c;
    else
      CHECK(std::memcmp(first.data(), c.data(), c.size() * sizeof(T)) == 0);
  }
}
}  // namespace

TEST_CASE("every GEMM kernel set: results do not depend on the thread count (bitwise)") {
  IsaGuard guard;
  for (const KernelSet& ks : kernel_sets()) {
    ks.use();
    INFO("kernels " << ks.name);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        INFO("ta=" << ta << " tb=" << tb);
        check_thread_invariance<float>(ta, tb, 300, 257, 520, 0.0);
        check_thread_invariance<float>(ta, tb, 20, 600, 300, 1.0);  // B read in place, split by columns
        check_thread_invariance<float>(ta, tb, 600, 20, 300, 0.5);  // A read in place, split by rows
        check_thread_invariance<double>(ta, tb, 150, 131, 129, 0.0);
        check_thread_invariance<float>(ta, tb, 5000, 1, 1000, 0.0);  // matrix-vector, split over rows
        check_thread_invariance<float>(ta, tb, 1, 5000, 1000, 1.0);
      }
  }
}
