// cpu::gemm's Half and BFloat16 products (gemm_16bit.cpp, gemm_bf16.h, gemm_kernel_avx512_bf16.cpp):
//  - the scalar emulation of vdpbf16ps on hand values (pair order, rounding, denormals);
//  - the pair-word packing layout, and packing + the emulated micro-kernel giving the product
//    (against float64 with a tolerance derived from the roundings);
//  - the driver (blocking, fast packers, threads) on the emulated kernel, bit for bit against
//    the definition (one dpbf16 chain per element, one rounding);
//  - the vdpbf16ps kernel itself against the emulation, bit for bit (only where the CPU has
//    AVX512_BF16; elsewhere a message says it was skipped);
//  - the widening fallback: bit for bit the float product on widened operands, rounded once;
//  - PyTorch's CPU bfloat16 matmul/addmm (fixtures/make_bf16_matmul.py) within one rounding.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ember/core/cpu/gemm.h"
#include "ember/core/cpu/gemm_bf16.h"
#include "ember/core/cpu/gemm_isa.h"
#include "ember/core/cpu/gemm_kernel.h"
#include "fixtures/bf16_matmul_fixtures.h"
#include "op_check.h"

using namespace ember;
namespace bf = ember::cpu::gemm_bf16;

namespace {

BFloat16 bf16(float x) { return BFloat16(x); }
float f(BFloat16 x) { return static_cast<float>(x); }
uint32_t pair(float lo, float hi) { return bf::make_pair(bf16(lo), bf16(hi)); }
uint32_t pair_bits(uint16_t lo, uint16_t hi) { return uint32_t{lo} | uint32_t{hi} << 16; }
uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
/// Bitwise equal floats, any NaN equal to any NaN (payloads are not part of the contract).
bool same(float x, float y) { return (std::isnan(x) && std::isnan(y)) || bits_of(x) == bits_of(y); }
bool same(BFloat16 x, BFloat16 y) { return same(f(x), f(y)); }

/// Restores the instruction set, the kernel overrides and the thread count.
struct IsaGuard {
  cpu::GemmIsa saved = cpu::gemm_isa();
  int threads = get_num_threads();
  ~IsaGuard() {
    cpu::gemm_detail::use_kernels_for_testing(nullptr);
    cpu::gemm_detail::use_bf16_kernels_for_testing(nullptr);
    cpu::set_gemm_isa(saved);
    set_num_threads(threads);
  }
};

/// Deterministic values in [-1, 1) rounded to T: BFloat16 and Half keep 8 and 11 significant
/// bits, so products and sums round in float and the tests see the roundings.
template <class T>
std::vector<T> data(size_t n, uint64_t seed) {
  std::vector<T> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<T>(static_cast<float>(static_cast<double>(seed >> 11) / 4503599627370496.0 - 1.0));
  }
  return v;
}

/// A product's operands and C in a given layout (leading dimensions padded by pad).
template <class T>
struct Problem {
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  std::vector<T> a, b, c;
  T A(int64_t i, int64_t p) const { return ta ? a[p * lda + i] : a[i * lda + p]; }
  T B(int64_t p, int64_t j) const { return tb ? b[j * ldb + p] : b[p * ldb + j]; }
  // Strides of op(A)'s rows and depth, op(B)'s columns and depth.
  int64_t ars() const { return ta ? 1 : lda; }
  int64_t acs() const { return ta ? lda : 1; }
  int64_t bcs() const { return tb ? ldb : 1; }
  int64_t brs() const { return tb ? 1 : ldb; }
};

template <class T>
Problem<T> make_problem(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta, int64_t pad,
                        bool nan_c = false) {
  const uint64_t seed = static_cast<uint64_t>(m * 1000003 + n * 1009 + k * 7 + ta * 2 + tb + pad * 31);
  Problem<T> P{ta, tb, m, n, k, (ta ? m : k) + pad, (tb ? k : n) + pad, n + pad, alpha, beta, {}, {}, {}};
  P.a = data<T>(static_cast<size_t>((ta ? k : m) * P.lda), seed);
  P.b = data<T>(static_cast<size_t>((tb ? n : k) * P.ldb), seed + 1);
  P.c = data<T>(static_cast<size_t>(m * P.ldc), seed + 2);
  if (nan_c)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) P.c[i * P.ldc + j] = static_cast<T>(NAN);
  return P;
}

template <class T>
std::vector<T> run_gemm(const Problem<T>& P) {
  std::vector<T> c = P.c;
  cpu::gemm<T>(P.ta, P.tb, P.m, P.n, P.k, P.alpha, P.a.data(), P.lda, P.b.data(), P.ldb, P.beta, c.data(), P.ldc);
  return c;
}

/// C from the definition of the vdpbf16ps path: dot_chain per element, dpbf16_finish.
std::vector<BFloat16> chain_oracle(const Problem<BFloat16>& P) {
  std::vector<BFloat16> c = P.c;
  for (int64_t i = 0; i < P.m; ++i)
    for (int64_t j = 0; j < P.n; ++j) {
      const BFloat16* x = P.a.data() + i * P.ars();
      const BFloat16* y = P.b.data() + j * P.bcs();
      const float s = bf::dot_chain(x, P.acs(), y, P.brs(), P.k);
      c[i * P.ldc + j] = bf::dpbf16_finish(s, P.alpha, P.beta, P.c[i * P.ldc + j]);
    }
  return c;
}

/// got against float64 within what the roundings allow: the float sum's (one per product,
/// k of them, plus the fma with beta C: (k + 2) 2^-24 of the magnitudes, doubled for margin)
/// and the final rounding to T of both got and the reference (2^-7 of |C| for BFloat16, one
/// unit in its last place either way; 2^-10 for Half, and among Half's subnormals one unit,
/// 2^-24). Padding must be untouched.
template <class T>
void check_close(const Problem<T>& P, const std::vector<T>& got) {
  const double round_c = std::is_same_v<T, BFloat16> ? 0x1p-7 : 0x1p-10;
  const double round_abs = std::is_same_v<T, BFloat16> ? 0x1p-133 : 0x1p-24;
  int bad = 0;
  for (int64_t i = 0; i < P.m; ++i)
    for (int64_t j = 0; j < P.ldc; ++j) {
      const size_t e = static_cast<size_t>(i * P.ldc + j);
      if (j >= P.n) {
        if (!same(static_cast<float>(got[e]), static_cast<float>(P.c[e])) && bad++ < 3) CHECK_MESSAGE(false, "padding written");
        continue;
      }
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < P.k; ++p) {
        const double prod = static_cast<double>(static_cast<float>(P.A(i, p))) * static_cast<float>(P.B(p, j));
        ref += prod;
        mag += std::fabs(prod);
      }
      ref *= P.alpha;
      mag *= std::fabs(P.alpha);
      if (P.beta != 0.0f) {
        ref += static_cast<double>(P.beta) * static_cast<float>(P.c[e]);
        mag += std::fabs(static_cast<double>(P.beta) * static_cast<float>(P.c[e]));
      }
      const double tol = round_c * std::fabs(ref) + round_abs + 2.0 * static_cast<double>(P.k + 2) * 0x1p-24 * mag;
      const double g = static_cast<float>(got[e]);
      if (!(std::fabs(g - ref) <= tol) && bad++ < 3) {
        INFO("m=" << P.m << " n=" << P.n << " k=" << P.k << " ta=" << P.ta << " tb=" << P.tb << " (" << i << ", "
                  << j << ") tol " << tol);
        CHECK_MESSAGE(false, "got " << g << ", float64 " << ref);
      }
    }
  CHECK(bad == 0);
}

/// got and want bit for bit (NaNs of any payload alike), the padding included.
template <class T>
void check_same(const Problem<T>& P, const std::vector<T>& got, const std::vector<T>& want) {
  int bad = 0;
  for (size_t e = 0; e < got.size(); ++e)
    if (!same(got[e], want[e]) && bad++ < 3) {
      INFO("m=" << P.m << " n=" << P.n << " k=" << P.k << " ta=" << P.ta << " tb=" << P.tb << " alpha=" << P.alpha
                << " beta=" << P.beta << " element " << e << " (" << e / P.ldc << ", " << e % P.ldc << ")");
      CHECK(static_cast<float>(got[e]) == static_cast<float>(want[e]));
    }
  CHECK(bad == 0);
}

// The emulated kernel in the shape of the vdpbf16ps one (12 x 32), with small blocks so that
// small products already cross depth blocks (kc 8 and 6: odd depths inside the last block)
// and row blocks (mc 24).
void emulated_12x32(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, bool accumulate) {
  bf::emulated_tile(12, 32, kp, a, b, c, ldc, accumulate);
}
const cpu::gemm_detail::Bf16Kernels kEmulated{12, 32, 8, 24, &emulated_12x32};
const cpu::gemm_detail::Bf16Kernels kEmulatedDeep{12, 32, 384, 144, &emulated_12x32};

}  // namespace

TEST_CASE("vdpbf16ps emulation: hand values") {
  // 0.5 + 3 * 4 + 1 * 2: the high pair first, then the low one.
  CHECK(bf::dpbf16_lane(0.5f, pair(1, 3), pair(2, 4)) == 14.5f);
  // Order and one rounding per step: 1 + 2^24 rounds to 2^24 (nearest even), then - 2^24
  // gives 0; the low pair first would give (1 - 2^24) + 2^24 = 1.
  CHECK(bf::dpbf16_lane(1.0f, pair(-0x1p24f, 0x1p24f), pair(1, 1)) == 0.0f);
  CHECK(bf::dpbf16_lane(1.0f, pair(0x1p24f, -0x1p24f), pair(1, 1)) == 1.0f);
  // One rounding per step, to nearest even: 2^24 + 1 ties to 2^24, then + 2 gives 2^24 + 2
  // (the exact 2^24 + 3 rounded once would be 2^24 + 4).
  CHECK(bf::dpbf16_lane(0x1p24f, pair(2, 1), pair(1, 1)) == 0x1p24f + 2.0f);
  // Input denormals are zero: the BFloat16 0x0001 (2^-133) times 2^100 would be 2^-33.
  CHECK(bf::dpbf16_lane(0.0f, pair_bits(0x0001, 0), pair(0x1p100f, 0)) == 0.0f);
  CHECK(bf::dpbf16_lane(0.0f, pair_bits(0x0040, 0), pair(0x1p100f, 0)) == 0.0f);  // 2^-127
  CHECK(bf::dpbf16_lane(0.0f, pair_bits(0x0080, 0), pair(0x1p100f, 0)) == 0x1p-26f);  // 2^-126: normal
  // Output denormals are zero: 2^-70 * 2^-70 = 2^-140; the accumulator's own denormal too.
  CHECK(bf::dpbf16_lane(0.0f, pair(0x1p-70f, 0), pair(0x1p-70f, 0)) == 0.0f);
  CHECK(bf::dpbf16_lane(0x1p-140f, pair(0, 0), pair(0, 0)) == 0.0f);
  CHECK(bf::dpbf16_lane(0x1p-100f, pair(0x1p-70f, 0), pair(0x1p-70f, 0)) == 0x1p-100f);  // + 2^-140 lost
  // Products exact before the add (fused): 2^-64 * 2^-64 = 2^-128 would be denormal as a
  // float of its own, but inside the step it is not flushed: -2^-110 + 2^-128 is exact.
  CHECK(bf::dpbf16_lane(-0x1p-110f, pair(0x1p-64f, 0), pair(0x1p-64f, 0)) == -0x1p-110f + 0x1p-128f);
  // NaN and infinities propagate as in float.
  CHECK(std::isnan(bf::dpbf16_lane(0.0f, pair(NAN, 1), pair(1, 1))));
  CHECK(std::isnan(bf::dpbf16_lane(0.0f, pair(INFINITY, 0), pair(0, 0))));
  CHECK(bf::dpbf16_lane(1.0f, pair(INFINITY, 1), pair(1, 1)) == INFINITY);
}

TEST_CASE("BFloat16 pair packing: the layout") {
  // Three lines, depth 5 (odd), into a panel of R = 4 lines: x(l, p) = 10 l + p.
  std::vector<BFloat16> x(3 * 5);
  for (int l = 0; l < 3; ++l)
    for (int p = 0; p < 5; ++p) x[l * 5 + p] = bf16(static_cast<float>(10 * l + p));
  std::vector<uint32_t> panel(3 * 4, 0xdeadbeefu);
  REQUIRE(bf::pair_count(5) == 3);
  bf::pack_pairs(x.data(), 5, 1, 3, 4, 5, panel.data());
  for (int q = 0; q < 3; ++q)
    for (int l = 0; l < 4; ++l) {
      INFO("q=" << q << " l=" << l);
      const uint32_t w = panel[q * 4 + l];
      if (l == 3) {
        CHECK(w == 0u);  // the edge line
        continue;
      }
      CHECK(bf::pair_lo(w) == static_cast<float>(10 * l + 2 * q));
      if (q == 2)
        CHECK((w >> 16) == 0u);  // the odd depth's pad: +0
      else
        CHECK(bf::pair_hi(w) == static_cast<float>(10 * l + 2 * q + 1));
    }
  // The same lines read the other way (depth stride 3, line stride 1: x stored transposed).
  std::vector<BFloat16> xt(5 * 3);
  for (int l = 0; l < 3; ++l)
    for (int p = 0; p < 5; ++p) xt[p * 3 + l] = x[l * 5 + p];
  std::vector<uint32_t> panel_t(3 * 4, 0xdeadbeefu);
  bf::pack_pairs(xt.data(), 1, 3, 3, 4, 5, panel_t.data());
  CHECK(panel_t == panel);
}

namespace {
/// C through the header alone: pack_pairs panels of mr x nr tiles (edge tiles padded) over
/// the whole depth, emulated_tile, dpbf16_finish.
std::vector<BFloat16> packed_emulated_gemm(const Problem<BFloat16>& P, int mr, int nr) {
  std::vector<BFloat16> c = P.c;
  const int64_t kp = bf::pair_count(P.k);
  std::vector<uint32_t> ap(static_cast<size_t>(kp * mr)), bp(static_cast<size_t>(kp * nr));
  std::vector<float> tile(static_cast<size_t>(mr * nr));
  for (int64_t i0 = 0; i0 < P.m; i0 += mr)
    for (int64_t j0 = 0; j0 < P.n; j0 += nr) {
      const int64_t h = std::min<int64_t>(mr, P.m - i0), w = std::min<int64_t>(nr, P.n - j0);
      bf::pack_pairs(P.a.data() + i0 * P.ars(), P.ars(), P.acs(), h, mr, P.k, ap.data());
      bf::pack_pairs(P.b.data() + j0 * P.bcs(), P.bcs(), P.brs(), w, nr, P.k, bp.data());
      bf::emulated_tile(mr, nr, kp, ap.data(), bp.data(), tile.data(), nr, false);
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          BFloat16& cv = c[(i0 + i) * P.ldc + j0 + j];
          cv = bf::dpbf16_finish(tile[i * nr + j], P.alpha, P.beta, cv);
        }
    }
  return c;
}
}  // namespace

TEST_CASE("BFloat16 packing + emulated micro-kernel give the product") {
  const int64_t sizes[] = {1, 2, 7, 13};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : {1, 2, 5, 6, 33, 64}) {
            const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, m, n, k, 1.0f, 0.0f, 0);
            const std::vector<BFloat16> got = packed_emulated_gemm(P, 4, 8);
            check_close(P, got);
            check_same(P, got, chain_oracle(P));  // the layout feeds the chain its pairs in order
          }
  // alpha, beta, padded (odd) leading dimensions, NaN in C with beta == 0.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      for (const auto& [alpha, beta] : {std::pair{2.0f, 0.5f}, std::pair{-1.5f, 1.0f}, std::pair{0.25f, -3.0f}}) {
        const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, 11, 9, 37, alpha, beta, 3);
        const std::vector<BFloat16> got = packed_emulated_gemm(P, 4, 8);
        check_close(P, got);
        check_same(P, got, chain_oracle(P));
      }
      const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, 6, 10, 21, 1.0f, 0.0f, 1, true);
      check_close(P, packed_emulated_gemm(P, 4, 8));
    }
}

TEST_CASE("BFloat16 gemm on the emulated vdpbf16ps kernel: bit for bit the definition") {
  IsaGuard guard;
  for (const cpu::gemm_detail::Bf16Kernels* ks : {&kEmulated, &kEmulatedDeep}) {
    cpu::gemm_detail::use_bf16_kernels_for_testing(ks);
    INFO("kc " << ks->kc << " mc " << ks->mc);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        INFO("ta=" << ta << " tb=" << tb);
        // Edge tiles (m, n off 12 and 32), depths crossing blocks of 8 with odd remainders,
        // rows across mc, columns across the 128-column blocks of C.
        for (int64_t m : {2, 13, 30})
          for (int64_t n : {2, 33, 70})
            for (int64_t k : {1, 2, 9, 17, 40}) {
              const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, m, n, k, 1.0f, 0.0f, 0);
              check_same(P, run_gemm(P), chain_oracle(P));
            }
        for (int64_t pad : {1, 2}) {  // odd pads: pair words unaligned in memory
          const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, 25, 150, 23, 2.0f, 0.5f, pad);
          const std::vector<BFloat16> got = run_gemm(P);
          check_same(P, got, chain_oracle(P));
          check_close(P, got);
        }
        const Problem<BFloat16> Pn = make_problem<BFloat16>(ta, tb, 14, 35, 19, -1.0f, 0.0f, 2, true);
        check_same(Pn, run_gemm(Pn), chain_oracle(Pn));  // beta == 0: NaN in C ignored
        // Matrix-vector products widen instead (no tiles): still within the roundings.
        for (const auto& [m, n] : {std::pair<int64_t, int64_t>{1, 40}, std::pair<int64_t, int64_t>{40, 1}}) {
          const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, m, n, 33, 1.0f, 1.0f, 1);
          check_close(P, run_gemm(P));
        }
      }
  }
}

TEST_CASE("BFloat16 gemm on the emulated kernel: the same bits for any thread count") {
  IsaGuard guard;
  cpu::gemm_detail::use_bf16_kernels_for_testing(&kEmulatedDeep);
  // Over kParallelWork (2^21 multiply-adds): split into tasks.
  const Problem<BFloat16> P = make_problem<BFloat16>(false, true, 130, 140, 120, 1.0f, 0.0f, 0);
  const std::vector<BFloat16> want = chain_oracle(P);
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    check_same(P, run_gemm(P), want);
  }
}

TEST_CASE("vdpbf16ps kernel: bit for bit the emulation (needs AVX512_BF16)") {
  // Availability first: the accessor is compiled with AVX512_BF16 flags (gemm_kernel.h).
  if (!cpu::gemm_isa_available(cpu::GemmIsa::kAvx512Bf16)) {
    MESSAGE("skipped: this build or CPU has no AVX512_BF16 (the vdpbf16ps kernel is checked where it has)");
    return;
  }
  const cpu::gemm_detail::Bf16Kernels* hw = cpu::gemm_detail::avx512_bf16_kernels();
  REQUIRE(hw != nullptr);
  REQUIRE(hw->mr == 12);
  REQUIRE(hw->nr == 32);
  REQUIRE(hw->kc % 2 == 0);
  // Panels of random pair words with special values mixed in: denormal inputs, products
  // that underflow, large values, infinities and NaN in a few lanes.
  const uint16_t specials[] = {0x0001, 0x8040, 0x0080, 0x1f00, 0x9f00, 0x7f00, 0x7f80, 0xff80, 0x7fc0, 0x0000, 0x8000};
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(seed >> 33);
  };
  auto element = [&](bool special) -> uint16_t {
    const uint32_t r = next();
    if (special && r % 16 == 0) return specials[(r >> 4) % std::size(specials)];
    return BFloat16(static_cast<float>(static_cast<int32_t>(r % 4000) - 2000) / 256.0f).x;
  };
  for (int64_t kp : {1, 2, 7, 192})
    for (bool special : {false, true})
      for (bool accumulate : {false, true}) {
        std::vector<uint32_t> a(static_cast<size_t>(kp * 12)), b(static_cast<size_t>(kp * 32));
        for (auto& w : a) w = pair_bits(element(special), element(special));
        for (auto& w : b) w = pair_bits(element(special), element(special));
        std::vector<float> c0(12 * 40);
        for (auto& x : c0) x = static_cast<float>(static_cast<int32_t>(next() % 2000) - 1000) / 64.0f;
        std::vector<float> got = c0, want = c0;
        hw->tile(kp, a.data(), b.data(), got.data(), 40, accumulate);
        bf::emulated_tile(12, 32, kp, a.data(), b.data(), want.data(), 40, accumulate);
        int bad = 0;
        for (size_t e = 0; e < got.size(); ++e)
          if (!same(got[e], want[e]) && bad++ < 3) {
            INFO("kp=" << kp << " special=" << special << " accumulate=" << accumulate << " element " << e);
            CHECK(got[e] == want[e]);
          }
        CHECK(bad == 0);
      }
  // And whole products on it, against the definition.
  IsaGuard guard;
  cpu::set_gemm_isa(cpu::GemmIsa::kAvx512Bf16);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Problem<BFloat16> P = make_problem<BFloat16>(ta, tb, 150, 70, 800, 1.0f, 0.0f, 1);
      check_same(P, run_gemm(P), chain_oracle(P));
      const Problem<BFloat16> Q = make_problem<BFloat16>(ta, tb, 13, 33, 45, 0.5f, 2.0f, 0);
      check_same(Q, run_gemm(Q), chain_oracle(Q));
    }
}

namespace {
/// The widening fallback against float_gemm on widened copies, rounded once: bitwise.
template <class T>
void check_widened(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta, int64_t pad,
                   bool nan_c = false) {
  const Problem<T> P = make_problem<T>(ta, tb, m, n, k, alpha, beta, pad, nan_c);
  auto widen = [](const std::vector<T>& v) {
    std::vector<float> w(v.size());
    for (size_t i = 0; i < v.size(); ++i) w[i] = static_cast<float>(v[i]);
    return w;
  };
  std::vector<float> a = widen(P.a), b = widen(P.b), c = widen(P.c);
  cpu::gemm<float>(ta, tb, m, n, k, alpha, a.data(), P.lda, b.data(), P.ldb, beta, c.data(), P.ldc);
  std::vector<T> want(c.size());
  for (size_t i = 0; i < c.size(); ++i) want[i] = static_cast<T>(c[i]);
  for (int64_t i = 0; i < m; ++i)  // the padding of C: untouched, so not rounded from float
    for (int64_t j = n; j < P.ldc; ++j) want[i * P.ldc + j] = P.c[i * P.ldc + j];
  const std::vector<T> got = run_gemm(P);
  check_same(P, got, want);
  if (!nan_c) check_close(P, got);
}
}  // namespace

TEST_CASE("Half and BFloat16 widening fallback: bit for bit the float product, rounded once") {
  IsaGuard guard;
  cpu::gemm_detail::use_bf16_kernels_for_testing(nullptr);
  if (cpu::gemm_isa() == cpu::GemmIsa::kAvx512Bf16) cpu::set_gemm_isa(cpu::GemmIsa::kAvx512);
  std::vector<const cpu::gemm_detail::Kernels*> sets{nullptr};  // nullptr: gemm_isa()'s own
  if (cpu::gemm_isa_available(cpu::GemmIsa::kAvx2) && cpu::gemm_detail::avx2_wide_kernels() != nullptr)
    sets.push_back(cpu::gemm_detail::avx2_wide_kernels());  // the 12 x 32 tiles on AVX2
  for (const cpu::gemm_detail::Kernels* ks : sets) {
    cpu::gemm_detail::use_kernels_for_testing(ks);
    INFO("kernels " << std::string(ks == nullptr ? cpu::gemm_isa_name(cpu::gemm_isa()) : "avx2_wide"));
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        INFO("ta=" << ta << " tb=" << tb);
        for (int64_t m : {2, 7, 33})
          for (int64_t n : {2, 17, 40})
            for (int64_t k : {1, 3, 20}) {
              check_widened<BFloat16>(ta, tb, m, n, k, 1.0f, 0.0f, 0);
              check_widened<Half>(ta, tb, m, n, k, 1.0f, 0.0f, 0);
            }
        // Depth over two blocks (kc 256 / 192), rows over mc (144), columns over 128.
        check_widened<BFloat16>(ta, tb, 150, 140, 300, 0.5f, 2.0f, 3);
        check_widened<Half>(ta, tb, 150, 140, 300, -1.0f, 0.25f, 1);
        check_widened<BFloat16>(ta, tb, 20, 9, 513, 1.0f, 1.0f, 2);
        check_widened<Half>(ta, tb, 13, 33, 65, 2.0f, 0.0f, 2, true);  // NaN in C, beta == 0
        // Matrix-vector products (no tiles), each of their three loops.
        check_widened<BFloat16>(ta, tb, 1, 300, 40, 1.0f, 0.5f, 1);
        check_widened<Half>(ta, tb, 300, 1, 40, 2.0f, 0.0f, 2);
        check_widened<BFloat16>(ta, tb, 70, 1, 5, 1.0f, 1.0f, 0);
        check_widened<Half>(ta, tb, 1, 1, 9, 1.0f, 1.0f, 0);
      }
    check_widened<BFloat16>(false, false, 7, 9, 0, 1.0f, 2.0f, 1);  // k == 0: C = beta C
    check_widened<Half>(true, false, 7, 9, 5, 0.0f, 0.0f, 1, true);  // alpha == beta == 0: zeros
  }
}

TEST_CASE("Half and BFloat16 widening fallback: the same bits for any thread count") {
  IsaGuard guard;
  cpu::gemm_detail::use_bf16_kernels_for_testing(nullptr);
  if (cpu::gemm_isa() == cpu::GemmIsa::kAvx512Bf16) cpu::set_gemm_isa(cpu::GemmIsa::kAvx512);
  const Problem<BFloat16> P = make_problem<BFloat16>(true, false, 300, 260, 270, 1.5f, 0.5f, 0);
  const Problem<Half> H = make_problem<Half>(false, true, 5000, 1, 500, 1.0f, 0.0f, 0);
  std::vector<BFloat16> first;
  std::vector<Half> first_h;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    if (first.empty()) {
      first = run_gemm(P);
      first_h = run_gemm(H);
    } else {
      check_same(P, run_gemm(P), first);
      check_same(H, run_gemm(H), first_h);
    }
  }
}

TEST_CASE("BFloat16 matmul and addmm agree with PyTorch's CPU results within one rounding") {
  IsaGuard guard;
  namespace fx = ember::test::bf16_matmul_fixtures;
  auto tensor = [](const std::vector<uint16_t>& bits, int64_t rows, int64_t cols) {
    Tensor t = empty({rows, cols}, TensorOptions().dtype(kBFloat16));
    std::memcpy(t.data_ptr(), bits.data(), bits.size() * sizeof(uint16_t));
    return t;
  };
  // On every path this CPU has: the widening fallback, and vdpbf16ps (emulated here, real
  // where the CPU has AVX512_BF16).
  std::vector<const cpu::gemm_detail::Bf16Kernels*> paths{nullptr, &kEmulatedDeep};
  for (const cpu::gemm_detail::Bf16Kernels* path : paths) {
    cpu::gemm_detail::use_bf16_kernels_for_testing(path);
    if (path == nullptr && cpu::gemm_isa() == cpu::GemmIsa::kAvx512Bf16) cpu::set_gemm_isa(cpu::GemmIsa::kAvx512);
    int exact = 0, total = 0;
    for (const fx::Case& cs : fx::cases) {
      INFO(cs.name << (path == nullptr ? " (widening)" : " (vdpbf16ps emulated)"));
      const Tensor a = tensor(cs.a, cs.m, cs.k);
      const Tensor b = cs.b_transposed ? tensor(cs.b, cs.n, cs.k).t() : tensor(cs.b, cs.k, cs.n);
      const Tensor c = tensor(cs.c, cs.m, cs.n);
      const Tensor out = cs.alpha == 1.0 && cs.beta == 0.0 ? a.matmul(b) : c.addmm(a, b, cs.beta, cs.alpha);
      REQUIRE(out.dtype() == kBFloat16);
      const Tensor outc = out.contiguous();
      const BFloat16* got = outc.data_ptr<BFloat16>();
      const Tensor bc = b.contiguous();
      const BFloat16* pa = a.data_ptr<BFloat16>();
      const BFloat16* pb = bc.data_ptr<BFloat16>();
      const BFloat16* pc = c.data_ptr<BFloat16>();
      int bad = 0;
      for (int64_t i = 0; i < cs.m; ++i)
        for (int64_t j = 0; j < cs.n; ++j) {
          double mag = 0;
          for (int64_t p = 0; p < cs.k; ++p) mag += std::fabs(static_cast<double>(f(pa[i * cs.k + p])) * f(pb[p * cs.n + j]));
          mag = mag * std::fabs(cs.alpha) + std::fabs(cs.beta * f(pc[i * cs.n + j]));
          const float want = f(BFloat16::from_bits(cs.out[static_cast<size_t>(i * cs.n + j)]));
          const float g = f(got[i * cs.n + j]);
          // Both round a float sum once: one BFloat16 unit apart at most (2^-7 relative),
          // plus what the two float summation orders may differ by.
          const double tol = 0x1p-7 * std::fabs(want) + 2.0 * static_cast<double>(cs.k + 2) * 0x1p-24 * mag;
          ++total;
          if (g == want) ++exact;
          if (!(std::fabs(static_cast<double>(g) - want) <= tol) && bad++ < 3) {
            INFO("(" << i << ", " << j << ")");
            CHECK(g == doctest::Approx(want));
          }
        }
      CHECK(bad == 0);
    }
    MESSAGE(std::string(path == nullptr ? "widening" : "vdpbf16ps (emulated)")
            << ": " << exact << " of " << total << " elements bitwise equal to PyTorch's");
    CHECK(exact * 10 >= total * 9);  // nearly all: the roundings rarely part ways
  }
}
