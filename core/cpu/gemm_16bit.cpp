// cpu::gemm for Half and BFloat16: sums in float and one rounding into C, either on the
// float micro-kernels with the operands widened while packed, or, for BFloat16 where the CPU
// has AVX512_BF16, on vdpbf16ps (gemm_bf16.h). A file of its own beside gemm.cpp, whose float
// driver it mirrors: the packing and task split both use are in gemm_internal.h.
#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/cpu/gemm.h"
#include "ember/core/cpu/gemm_bf16.h"
#include "ember/core/cpu/gemm_internal.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

using gemm_detail::cdiv;
using gemm_detail::MicroKernels;
using gemm_detail::pack_a;
using gemm_detail::pack_b;
using gemm_detail::round_up;
using gemm_detail::scratch;
using gemm_detail::task_grid;
using gemm_detail::TaskGrid;
#if defined(__AVX2__)
using gemm_detail::store_first;
using gemm_detail::transpose8;
#endif

// ---- Half and BFloat16 ----------------------------------------------------------------------
// Products and sums in float, one rounding when writing C (PyTorch's CPU semantics), without
// float copies of the operands: the blocked driver below packs A and B block by block as a
// float product does, widening them on the way (or, for BFloat16 on vdpbf16ps, pairing them:
// gemm_bf16.h), and sums each block of C in a float buffer until its last depth block, when
// it is rounded into C. Memory: a block of A, of B and of C per thread, whatever the shape.

/// A Half/BFloat16 product's operands, as pack_a and pack_b read them.
template <class S>
struct LowpOperands {
  const S* a;
  int64_t ars, acs;
  const S* b;
  int64_t brs, bcs;
};

/// The float kernels' product on widened operands: panels packed as float's, each depth
/// block's kernel call as float_gemm's (alpha, then beta on the first block and 1 after), on
/// a float block of C that holds C itself when beta reads it. The sums, and so the result
/// rounded from them, are those of float_gemm on the widened matrices.
template <class S, int MR, int NR>
struct WidenToFloat {
  using Packed = float;
  static constexpr int mr = MR, nr = NR;
  const MicroKernels<float>& ks;
  float alpha, beta;

  int mc() const { return ks.mc; }
  int64_t depth_block(int64_t k) const { return cdiv(k, cdiv(k, ks.kc)); }  // float_gemm's blocks
  static int64_t panel_size(int lines, int64_t kc) { return lines * kc; }
  void pack_a(const LowpOperands<S>& P, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst) const {
    cpu::pack_a<MR>(P, i0, rows, p0, kc, dst);
  }
  void pack_b(const LowpOperands<S>& P, int64_t j0, int64_t w, int64_t p0, int64_t kc, float* dst) const {
    cpu::pack_b<NR>(P, j0, w, p0, kc, dst);
  }
  bool stages_c() const { return beta != 0.0f; }
  void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool first) const {
    ks.packed[MR - 1](kc, a, 0, 0, b, NR, c, ldc, alpha, first ? beta : 1.0f);
  }
  S finish(float sum, S) const { return static_cast<S>(sum); }
};

#if defined(__AVX2__)
/// gemm_bf16::pack_pairs when the pair words lie in memory (depth stride 1: word (l, q) is
/// the 32 bits at src + l * ls + 2q): R lines of words side by side, 8 x 8 blocks through
/// registers; the last pair of an odd depth padded by hand.
template <int R>
void pack_pair_words(const BFloat16* src, int64_t ls, int64_t h, int64_t kc, uint32_t* dst) {
  const int64_t full = kc / 2;
  auto word = [&](int64_t l, int64_t q) {
    uint32_t w;
    std::memcpy(&w, src + l * ls + 2 * q, sizeof w);
    return w;
  };
  int64_t q = 0;
  if constexpr (R % 4 == 0) {
    for (; q + 8 <= full; q += 8)
      for (int g = 0; g < R; g += 8) {
        __m256 r[8];
        for (int t = 0; t < 8; ++t)
          r[t] = g + t < h ? _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (g + t) * ls + 2 * q)))
                           : _mm256_setzero_ps();
        transpose8(r);
        const int width = std::min(8, R - g);
        for (int t = 0; t < 8; ++t) store_first(reinterpret_cast<float*>(dst + (q + t) * R + g), r[t], width);
      }
  }
  for (; q < full; ++q)
    for (int l = 0; l < R; ++l) dst[q * R + l] = l < h ? word(l, q) : 0u;
  if (kc % 2 == 1)
    for (int l = 0; l < R; ++l) dst[full * R + l] = l < h ? uint32_t{src[l * ls + kc - 1].x} : 0u;
}

/// gemm_bf16::pack_pairs when the lines are contiguous (line stride 1) and the panel full:
/// the rows 2q and 2q + 1 interleaved, 16 or 8 lines at a time.
template <int R>
void pack_pair_rows(const BFloat16* src, int64_t ds, int64_t kc, uint32_t* dst) {
  const int64_t kp = gemm_bf16::pair_count(kc);
  for (int64_t q = 0; q < kp; ++q) {
    const BFloat16* lo = src + 2 * q * ds;
    const BFloat16* hi = 2 * q + 1 < kc ? lo + ds : nullptr;
    uint32_t* out = dst + q * R;
    int l = 0;
    for (; l + 16 <= R; l += 16) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + l));
      const __m256i y =
          hi != nullptr ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi + l)) : _mm256_setzero_si256();
      const __m256i a = _mm256_unpacklo_epi16(x, y), b = _mm256_unpackhi_epi16(x, y);  // lines 0-3 8-11, 4-7 12-15
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l), _mm256_permute2x128_si256(a, b, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l + 8), _mm256_permute2x128_si256(a, b, 0x31));
    }
    for (; l + 8 <= R; l += 8) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo + l));
      const __m128i y = hi != nullptr ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi + l)) : _mm_setzero_si128();
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + l), _mm_unpacklo_epi16(x, y));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + l + 4), _mm_unpackhi_epi16(x, y));
    }
    for (; l < R; ++l) out[l] = uint32_t{lo[l].x} | (hi != nullptr ? uint32_t{hi[l].x} << 16 : 0u);
  }
}
#endif

/// gemm_bf16::pack_pairs for a panel of R lines, through the fast paths where they apply.
template <int R>
void pack_pairs_fast(const BFloat16* src, int64_t ls, int64_t ds, int64_t h, int64_t kc, uint32_t* dst) {
#if defined(__AVX2__)
  if (ds == 1) return pack_pair_words<R>(src, ls, h, kc, dst);
  if (ls == 1 && h == R) return pack_pair_rows<R>(src, ds, kc, dst);
#endif
  gemm_bf16::pack_pairs(src, ls, ds, h, R, kc, dst);
}

/// BFloat16 on vdpbf16ps (or its emulation, for the tests): pair-word panels (gemm_bf16.h),
/// one chain of dpbf16 steps per element over all depth blocks (the float block of C carries
/// it from one to the next), alpha and beta applied when rounding into C.
template <int MR, int NR>
struct Bf16Dot {
  using Packed = uint32_t;
  static constexpr int mr = MR, nr = NR;
  const gemm_detail::Bf16Kernels& ks;
  float alpha, beta;

  int mc() const { return ks.mc; }
  int64_t depth_block(int64_t) const { return ks.kc; }  // even: every block starts on a pair
  static int64_t panel_size(int lines, int64_t kc) { return lines * gemm_bf16::pair_count(kc); }
  void pack_a(const LowpOperands<BFloat16>& P, int64_t i0, int64_t rows, int64_t p0, int64_t kc,
              uint32_t* dst) const {
    for (int64_t r = 0; r < rows; r += MR)
      pack_pairs_fast<MR>(P.a + (i0 + r) * P.ars + p0 * P.acs, P.ars, P.acs, std::min<int64_t>(MR, rows - r), kc,
                          dst + r * gemm_bf16::pair_count(kc));
  }
  void pack_b(const LowpOperands<BFloat16>& P, int64_t j0, int64_t w, int64_t p0, int64_t kc, uint32_t* dst) const {
    pack_pairs_fast<NR>(P.b + j0 * P.bcs + p0 * P.brs, P.bcs, P.brs, w, kc, dst);
  }
  static bool stages_c() { return false; }
  void tile(int64_t kc, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, bool first) const {
    ks.tile(gemm_bf16::pair_count(kc), a, b, c, ldc, !first);
  }
  BFloat16 finish(float sum, BFloat16 c) const { return gemm_bf16::dpbf16_finish(sum, alpha, beta, c); }
};

/// Columns of C per float block (with mc rows, some 72 KiB of floats beside the A block in L2).
constexpr int64_t kLowpColumns = 128;

/// The Half/BFloat16 product, m, n > 1, k > 0 and alpha != 0, on a policy (WidenToFloat or
/// Bf16Dot) that packs the panels, runs the micro-kernel and rounds into C. Tasks as
/// fast_gemm's; each runs its rows in blocks of mc and its columns in blocks of
/// kLowpColumns, and each such block of C through all depth blocks (packing A and B for it)
/// in a float buffer before rounding it into C.
template <class S, class Policy>
void lowp_blocked(const Policy& pol, const LowpOperands<S>& P, int64_t m, int64_t n, int64_t k, S* c,
                  int64_t ldc) {
  using Packed = typename Policy::Packed;
  constexpr int mr = Policy::mr, nr = Policy::nr;
  const int mc = pol.mc();
  const int64_t kcb = pol.depth_block(k), nkb = cdiv(k, kcb);
  const int64_t ncb = std::max<int64_t>(nr, kLowpColumns / nr * nr);
  const TaskGrid grid = task_grid(m, n, m * n * k, mr, nr, mc);
  const int64_t row_tiles = cdiv(m, mr), col_tiles = cdiv(n, nr);
  auto block = [&](int64_t ib, int64_t mb, int64_t jb, int64_t nb) {
    const int64_t ldf = round_up(nb, nr), apanel = Policy::panel_size(mr, kcb), bpanel = Policy::panel_size(nr, kcb);
    Packed* abuf = scratch<Packed>(0, cdiv(mb, mr) * apanel);
    Packed* bbuf = scratch<Packed>(1, cdiv(nb, nr) * bpanel);
    float* cf = scratch<float>(2, round_up(mb, mr) * ldf);
    if (pol.stages_c())
      for (int64_t i = 0; i < round_up(mb, mr); ++i)
        for (int64_t j = 0; j < ldf; ++j)
          cf[i * ldf + j] = i < mb && j < nb ? static_cast<float>(c[(ib + i) * ldc + jb + j]) : 0.0f;
    for (int64_t kb = 0; kb < nkb; ++kb) {
      const int64_t p0 = kb * kcb, kc = std::min(kcb, k - p0);
      const int64_t ap = Policy::panel_size(mr, kc), bp = Policy::panel_size(nr, kc);
      pol.pack_a(P, ib, mb, p0, kc, abuf);
      for (int64_t q = 0; q * nr < nb; ++q)
        pol.pack_b(P, jb + q * nr, std::min<int64_t>(nr, nb - q * nr), p0, kc, bbuf + q * bp);
      for (int64_t q = 0; q * nr < nb; ++q)
        for (int64_t r = 0; r * mr < mb; ++r)
          pol.tile(kc, abuf + r * ap, bbuf + q * bp, cf + r * mr * ldf + q * nr, ldf, kb == 0);
    }
    for (int64_t i = 0; i < mb; ++i)
      for (int64_t j = 0; j < nb; ++j) {
        S& cv = c[(ib + i) * ldc + jb + j];
        cv = pol.finish(cf[i * ldf + j], cv);
      }
  };
  parallel_for(grid.tm * grid.tn, 1, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      const int64_t ti = t / grid.tn, tj = t % grid.tn;
      const int64_t i0 = ti * row_tiles / grid.tm * mr, i1 = std::min(m, (ti + 1) * row_tiles / grid.tm * mr);
      const int64_t j0 = tj * col_tiles / grid.tn * nr, j1 = std::min(n, (tj + 1) * col_tiles / grid.tn * nr);
      for (int64_t ib = i0; ib < i1; ib += mc)
        for (int64_t jb = j0; jb < j1; jb += ncb) block(ib, std::min<int64_t>(mc, i1 - ib), jb, std::min(ncb, j1 - jb));
    }
  });
}

/// C = beta C in S for the products that read neither A nor B (k == 0 or alpha == 0).
template <class S>
void lowp_scale_c(int64_t m, int64_t n, float beta, S* c, int64_t ldc) {
  if (beta == 1.0f) return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      S& cv = c[i * ldc + j];
      cv = beta == 0.0f ? S(0.0f) : static_cast<S>(beta * static_cast<float>(cv));
    }
}

}  // namespace

/// Half and BFloat16: float sums, one rounding into C. BFloat16 runs on vdpbf16ps where
/// gemm_isa() is avx512_bf16; everything else widens to float on the float kernels, with the
/// sums float_gemm would compute on the widened matrices.
template <class S>
void gemm_detail::low_precision_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                                     const S* a, int64_t lda, const S* b, int64_t ldb, float beta, S* c,
                                     int64_t ldc) {
  if (k == 0 || alpha == 0.0f) {
    lowp_scale_c(m, n, beta, c, ldc);
    return;
  }
  const int64_t ars = ta ? 1 : lda, acs = ta ? lda : 1, brs = tb ? 1 : ldb, bcs = tb ? ldb : 1;
  if (n == 1) {  // C's column = op(A) x
    gemm_detail::matvec(m, k, a, ars, acs, b, brs, alpha, beta, c, ldc);
    return;
  }
  if (m == 1) {  // C's row = op(B)^T x
    gemm_detail::matvec(n, k, b, bcs, brs, a, acs, alpha, beta, c, 1);
    return;
  }
  const LowpOperands<S> P{a, ars, acs, b, brs, bcs};
  if constexpr (std::is_same_v<S, BFloat16>) {
    if (const gemm_detail::Bf16Kernels* bk = gemm_detail::active_bf16_kernels()) {
      EMBER_CHECK(bk->mr == 12 && bk->nr == 32, "gemm: no driver for ", bk->mr, " x ", bk->nr, " BFloat16 micro-kernels");
      lowp_blocked(Bf16Dot<12, 32>{*bk, alpha, beta}, P, m, n, k, c, ldc);
      return;
    }
  }
  const gemm_detail::Kernels* kernels = gemm_detail::active_kernels();
  if (kernels == nullptr) {  // no kernel for this CPU or build: the plain loop
    gemm_reference<S>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const MicroKernels<float>& ks = kernels->f32;
  if (ks.mr == 6 && ks.nr == 16)
    lowp_blocked(WidenToFloat<S, 6, 16>{ks, alpha, beta}, P, m, n, k, c, ldc);
  else if (ks.mr == 12 && ks.nr == 32)
    lowp_blocked(WidenToFloat<S, 12, 32>{ks, alpha, beta}, P, m, n, k, c, ldc);
  else
    EMBER_CHECK(false, "gemm: no driver for ", ks.mr, " x ", ks.nr, " micro-kernels");
}

template void gemm_detail::low_precision_gemm<Half>(bool, bool, int64_t, int64_t, int64_t, float, const Half*,
                                                    int64_t, const Half*, int64_t, float, Half*, int64_t);
template void gemm_detail::low_precision_gemm<BFloat16>(bool, bool, int64_t, int64_t, int64_t, float,
                                                        const BFloat16*, int64_t, const BFloat16*, int64_t,
                                                        float, BFloat16*, int64_t);

}  // namespace ember::cpu
