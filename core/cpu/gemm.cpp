// GEMM on the CPU: ember's own blocked product for float and double, the same for Half and
// BFloat16 computing in float (operands widened while packed, or BFloat16 pairs on
// vdpbf16ps: gemm_bf16.h), a plain loop for integers (PyTorch multiplies integer matrices on
// the CPU too), and the tensor front end that maps strided operands onto it.
//
// The float/double product (fast_gemm) is the classic packed, cache-blocked scheme: depth k
// in blocks of kc, each block's B panel (kc x n, stored as micro-panels of nr columns) packed
// once and shared by all threads, the rows of A in blocks of mc packed per task into
// micro-panels of mr rows, and a register-blocked micro-kernel (gemm_kernel.h; one per
// instruction set, picked at run time, gemm_isa.h) computing mr x nr tiles of C with the
// B micro-panel in L1. Small products skip packing where it would cost more than it saves
// (the kernel then reads A and B in place). Threads split C into fixed tasks (rows x
// columns), never k: each element of C is the same chain of fused multiply-adds however the
// product is split, so results are bitwise the same for any thread count.
#include "ember/core/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <type_traits>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/gemm_bf16.h"
#include "ember/core/cpu/gemm_isa.h"
#include "ember/core/cpu/gemm_kernel.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {

// ---- instruction set dispatch (gemm_isa.h) -------------------------------------------------
namespace {

bool cpu_supports(GemmIsa isa) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();  // products may run from static initialisers, before libgcc's own
  switch (isa) {
    case GemmIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GemmIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GemmIsa::kAvx512Bf16:
      // libgcc and compiler-rt report AVX-512 features only where the OS saves zmm state.
      return cpu_supports(GemmIsa::kAvx512) && __builtin_cpu_supports("avx512bf16");
  }
  return false;
#else
  (void)isa;
  return false;
#endif
}

const gemm_detail::Kernels* compiled_kernels(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx2:
      return gemm_detail::avx2_kernels();
    case GemmIsa::kAvx512:
      return gemm_detail::avx512_kernels();
    case GemmIsa::kAvx512Bf16:  // AVX-512's float kernels beside the BFloat16 one
      return gemm_detail::avx512_bf16_kernels() != nullptr ? gemm_detail::avx512_kernels() : nullptr;
  }
  return nullptr;
}

constexpr GemmIsa kIsas[] = {GemmIsa::kAvx2, GemmIsa::kAvx512, GemmIsa::kAvx512Bf16};

/// EMBER_GEMM_ISA when set, else the widest available.
GemmIsa initial_isa() {
  const GemmIsa fallback = gemm_isa_available(GemmIsa::kAvx512Bf16) ? GemmIsa::kAvx512Bf16
                           : gemm_isa_available(GemmIsa::kAvx512)   ? GemmIsa::kAvx512
                                                                    : GemmIsa::kAvx2;
  const char* env = std::getenv("EMBER_GEMM_ISA");
  if (env == nullptr || *env == '\0') return fallback;
  for (GemmIsa isa : kIsas)
    if (std::strcmp(env, gemm_isa_name(isa)) == 0 && gemm_isa_available(isa)) return isa;
  // Not an exception: the first product may run on a worker thread, where one would abort
  // the program. A benchmark must not silently measure another kernel, hence the message.
  std::fprintf(stderr, "ember: EMBER_GEMM_ISA=%s is not one of avx2, avx512, avx512_bf16 available on this build and CPU; "
               "using %s\n",
               env, gemm_isa_name(fallback));
  return fallback;
}

/// The instruction set in use; set once from initial_isa() (thread-safe static), then by
/// set_gemm_isa.
std::atomic<GemmIsa>& isa_slot() {
  static std::atomic<GemmIsa> slot{initial_isa()};
  return slot;
}

/// use_kernels_for_testing's and use_bf16_kernels_for_testing's overrides (nullptr: none).
std::atomic<const gemm_detail::Kernels*> g_test_kernels{nullptr};
std::atomic<const gemm_detail::Bf16Kernels*> g_test_bf16_kernels{nullptr};

/// The kernels products run on; nullptr where none runs here (then a plain loop computes).
const gemm_detail::Kernels* active_kernels() {
  if (const gemm_detail::Kernels* k = g_test_kernels.load(std::memory_order_relaxed)) return k;
  const GemmIsa isa = isa_slot().load(std::memory_order_relaxed);
  return gemm_isa_available(isa) ? compiled_kernels(isa) : nullptr;
}

/// The vdpbf16ps kernel BFloat16 products run on; nullptr: they widen to float instead.
const gemm_detail::Bf16Kernels* active_bf16_kernels() {
  if (const gemm_detail::Bf16Kernels* k = g_test_bf16_kernels.load(std::memory_order_relaxed)) return k;
  const GemmIsa isa = isa_slot().load(std::memory_order_relaxed);
  return isa == GemmIsa::kAvx512Bf16 && gemm_isa_available(isa) ? gemm_detail::avx512_bf16_kernels() : nullptr;
}

}  // namespace

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx2:
      return "avx2";
    case GemmIsa::kAvx512:
      return "avx512";
    case GemmIsa::kAvx512Bf16:
      return "avx512_bf16";
  }
  return "unknown";
}

// The CPU first: an accessor compiled with AVX-512 flags may use them itself. Asked once
// per instruction set (every product asks).
bool gemm_isa_available(GemmIsa isa) {
  static const bool available[] = {
      cpu_supports(GemmIsa::kAvx2) && compiled_kernels(GemmIsa::kAvx2) != nullptr,
      cpu_supports(GemmIsa::kAvx512) && compiled_kernels(GemmIsa::kAvx512) != nullptr,
      cpu_supports(GemmIsa::kAvx512Bf16) && compiled_kernels(GemmIsa::kAvx512Bf16) != nullptr};
  const auto i = static_cast<size_t>(isa);
  return i < std::size(available) && available[i];
}

GemmIsa gemm_isa() { return isa_slot().load(std::memory_order_relaxed); }

void set_gemm_isa(GemmIsa isa) {
  EMBER_CHECK(gemm_isa_available(isa), "set_gemm_isa: this build or this CPU has no ", gemm_isa_name(isa),
              " GEMM kernel");
  isa_slot().store(isa, std::memory_order_relaxed);
}

void gemm_detail::use_kernels_for_testing(const Kernels* kernels) {
  g_test_kernels.store(kernels, std::memory_order_relaxed);
}

void gemm_detail::use_bf16_kernels_for_testing(const Bf16Kernels* kernels) {
  g_test_bf16_kernels.store(kernels, std::memory_order_relaxed);
}

namespace {

/// Below this many multiply-adds a product runs as one task on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 21;

using gemm_detail::MicroKernel;
using gemm_detail::MicroKernels;

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return cdiv(a, b) * b; }

/// A per-thread, 64-byte aligned scratch buffer of at least n elements, kept between calls
/// (slot 0: the packed A block of a task, 1: the shared packed B panel, owned by the thread
/// that called gemm, or a Half/BFloat16 product's packed B block, 2: one edge micro-panel of
/// B, or a Half/BFloat16 product's block of C in float, 3: rows widened to float).
template <class T>
T* scratch(int slot, int64_t n) {
  struct Buffer {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
  };
  thread_local Buffer buffers[4];
  Buffer& buf = buffers[slot];
  const size_t want = static_cast<size_t>(n) * sizeof(T) + 64;
  if (buf.size < want) {
    buf.bytes.reset();  // free first: the old and the new buffer need not coexist
    buf.bytes.reset(new char[want]);
    buf.size = want;
  }
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(buf.bytes.get()) + 63) & ~uintptr_t{63});
}

/// One product's operands: op(A)(i, p) = a[i * ars + p * acs], op(B)(p, j) = b[p * brs + j * bcs].
template <class T>
struct Product {
  const MicroKernels<T>& ks;
  int64_t m, n, k;
  T alpha;
  const T* a;
  int64_t ars, acs;
  const T* b;
  int64_t brs, bcs;
  T* c;
  int64_t ldc;
  bool pack_a;
};

/// x in the type T its product computes in (S itself, or float for Half and BFloat16).
template <class S, class T>
T widen(S x) {
  return static_cast<T>(static_cast<opmath_t<S>>(x));
}

#if defined(__AVX2__) && defined(__F16C__)
/// Eight consecutive elements of src (float, Half or BFloat16) as floats.
template <class S>
__m256 load8(const S* src) {
  if constexpr (std::is_same_v<S, float>) {
    return _mm256_loadu_ps(src);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    if constexpr (std::is_same_v<S, BFloat16>)
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // the high half of a float
    else
      return _mm256_cvtph_ps(h);
  }
}
#endif

/// dst[i] = src[i] in T for i < n: a copy, or Half/BFloat16 widened to float (8 at a time).
template <class S, class T>
void widen_copy(const S* src, T* dst, int64_t n) {
  if constexpr (std::is_same_v<S, T>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else {
    int64_t i = 0;
#if defined(__AVX2__) && defined(__F16C__)
    if constexpr (std::is_same_v<T, float>)
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(src + i));
#endif
    for (; i < n; ++i) dst[i] = widen<S, T>(src[i]);
  }
}

#if defined(__AVX2__)
/// r[q] <- column q of the 8 x 8 matrix whose rows are r[0..7].
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int q = 0; q < 8; q += 2) {
    t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
    t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
  }
  for (int q = 0; q < 8; q += 4) {
    u[q] = _mm256_shuffle_ps(t[q], t[q + 2], 0x44);
    u[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], 0xEE);
    u[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0x44);
    u[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
  }
  for (int q = 0; q < 4; ++q) {
    r[q] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x20);
    r[q + 4] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x31);
  }
}

/// The first n (4, 6 or 8) floats of v to dst.
inline void store_first(float* dst, __m256 v, int n) {
  if (n == 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  const __m128 lo = _mm256_castps256_ps128(v);
  _mm_storeu_ps(dst, lo);
  if (n == 6) _mm_storel_pi(reinterpret_cast<__m64*>(dst + 4), _mm256_extractf128_ps(v, 1));
}
#endif

/// dst[p * R + i] = src[i * ld + p] for i < h, 0 for h <= i < R, p < kc: R rows of a
/// row-major matrix side by side (A stored untransposed into an A micro-panel, B stored
/// transposed into a B micro-panel), widened from S to T. 8 x 8 blocks through registers
/// for float.
template <int R, class S, class T>
void pack_transposed(const S* src, int64_t ld, int64_t h, int64_t kc, T* dst) {
  int64_t p = 0;
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (std::is_same_v<T, float> && R % 2 == 0 && R >= 4) {
    for (; p + 8 <= kc; p += 8)
      for (int g = 0; g < R; g += 8) {
        __m256 r[8];
        for (int q = 0; q < 8; ++q) r[q] = g + q < h ? load8(src + (g + q) * ld + p) : _mm256_setzero_ps();
        transpose8(r);
        const int width = std::min(8, R - g);
        for (int q = 0; q < 8; ++q) store_first(dst + (p + q) * R + g, r[q], width);
      }
  }
#endif
  for (; p < kc; ++p)
    for (int i = 0; i < R; ++i) dst[p * R + i] = i < h ? widen<S, T>(src[i * ld + p]) : T(0);
}

/// dst[p * R + i] = src[p * ld + i] for i < h, 0 for h <= i < R, p < kc: the rows of a
/// micro-panel already side by side in memory (A stored transposed, B untransposed),
/// widened from S to T.
template <int R, class S, class T>
void pack_direct(const S* src, int64_t ld, int64_t h, int64_t kc, T* dst) {
  if (h == R) {
    for (int64_t p = 0; p < kc; ++p) widen_copy(src + p * ld, dst + p * R, R);
    return;
  }
  for (int64_t p = 0; p < kc; ++p)
    for (int i = 0; i < R; ++i) dst[p * R + i] = i < h ? widen<S, T>(src[p * ld + i]) : T(0);
}

/// Rows [i0, i0 + rows) x depth [p0, p0 + kc) of op(A) as micro-panels of MR rows: panel r
/// at dst + r * MR * kc, its element (i, p) at [p * MR + i] (a short last panel padded).
/// Operands: a Product, or a Half/BFloat16 product's LowpOperands (widened on the way).
template <int MR, class Operands, class T>
void pack_a(const Operands& P, int64_t i0, int64_t rows, int64_t p0, int64_t kc, T* dst) {
  for (int64_t r = 0; r < rows; r += MR) {
    const int64_t h = std::min<int64_t>(MR, rows - r);
    const auto* s = P.a + (i0 + r) * P.ars + p0 * P.acs;
    if (P.ars == 1)
      pack_direct<MR>(s, P.acs, h, kc, dst + r * kc);
    else if (P.acs == 1)
      pack_transposed<MR>(s, P.ars, h, kc, dst + r * kc);
    else
      for (int64_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i)
          dst[r * kc + p * MR + i] = i < h ? widen<std::decay_t<decltype(*s)>, T>(s[i * P.ars + p * P.acs]) : T(0);
  }
}

/// Columns [j0, j0 + w) (w <= NR) x depth [p0, p0 + kc) of op(B) as one micro-panel:
/// element (p, j) at dst[p * NR + j], columns w..NR zero.
template <int NR, class Operands, class T>
void pack_b(const Operands& P, int64_t j0, int64_t w, int64_t p0, int64_t kc, T* dst) {
  const auto* s = P.b + p0 * P.brs + j0 * P.bcs;
  if (P.bcs == 1)
    pack_direct<NR>(s, P.brs, w, kc, dst);
  else if (P.brs == 1)
    pack_transposed<NR>(s, P.bcs, w, kc, dst);
  else
    for (int64_t p = 0; p < kc; ++p)
      for (int j = 0; j < NR; ++j)
        dst[p * NR + j] = j < w ? widen<std::decay_t<decltype(*s)>, T>(s[p * P.brs + j * P.bcs]) : T(0);
}

/// Micro-panels [q0, q1) of the columns [jc, jc + w) of op(B), depth [p0, p0 + kc), panel q
/// at dst + q * NR * kc. Untransposed B row by row (each row read once, contiguously).
template <int NR, class T>
void pack_b_panels(const Product<T>& P, int64_t jc, int64_t w, int64_t q0, int64_t q1, int64_t p0, int64_t kc,
                   T* dst) {
  if (P.bcs != 1) {
    for (int64_t q = q0; q < q1; ++q)
      pack_b<NR>(P, jc + q * NR, std::min<int64_t>(NR, w - q * NR), p0, kc, dst + q * NR * kc);
    return;
  }
  const int64_t full_end = std::min(q1, w / NR);  // panels [q0, full_end) are NR wide
  for (int64_t p = 0; p < kc; ++p) {
    const T* row = P.b + (p0 + p) * P.brs + jc;
    for (int64_t q = q0; q < full_end; ++q) std::memcpy(dst + q * NR * kc + p * NR, row + q * NR, NR * sizeof(T));
  }
  for (int64_t q = std::max(q0, full_end); q < q1; ++q)
    pack_b<NR>(P, jc + q * NR, std::min<int64_t>(NR, w - q * NR), p0, kc, dst + q * NR * kc);
}

/// C rows [i0, i0 + mb) x columns [j0, j0 + nb) += the depth block [p0, p0 + kc) (beta:
/// the caller's for the first block, 1 after). bpanel: that block's B packed for columns
/// from bpanel_j0 on (j0 - bpanel_j0 a multiple of NR), or nullptr to read B in place.
template <int MR, int NR, class T>
void run_block(const Product<T>& P, int64_t i0, int64_t mb, int64_t j0, int64_t nb, int64_t p0, int64_t kc, T beta,
               const T* bpanel, int64_t bpanel_j0) {
  const MicroKernels<T>& ks = P.ks;
  T* apacked = nullptr;
  if (P.pack_a) {
    apacked = scratch<T>(0, round_up(mb, MR) * kc);
    pack_a<MR>(P, i0, mb, p0, kc, apacked);
  }
  alignas(64) T tile[MR * NR];  // the sums of an edge micro-tile
  for (int64_t j = j0; j < j0 + nb; j += NR) {
    const int64_t w = std::min<int64_t>(NR, j0 + nb - j);
    const T* bp;
    int64_t rsb = NR;
    if (bpanel != nullptr) {
      bp = bpanel + (j - bpanel_j0) * kc;
    } else if (w == NR && P.bcs == 1) {
      bp = P.b + p0 * P.brs + j;
      rsb = P.brs;
    } else {
      T* buf = scratch<T>(2, kc * NR);
      pack_b<NR>(P, j, w, p0, kc, buf);
      bp = buf;
    }
    for (int64_t i = i0; i < i0 + mb; i += MR) {
      const int h = static_cast<int>(std::min<int64_t>(MR, i0 + mb - i));
      const MicroKernel<T> kernel = P.pack_a ? ks.packed[h - 1] : ks.strided[h - 1];
      const T* ap = P.pack_a ? apacked + (i - i0) * kc : P.a + i * P.ars + p0 * P.acs;
      T* cp = P.c + i * P.ldc + j;
      if (w == NR) {
        kernel(kc, ap, P.ars, P.acs, bp, rsb, cp, P.ldc, P.alpha, beta);
        continue;
      }
      // A partial tile: the kernel writes its sums (alpha 1, beta 0: exact), then the same
      // final rounding as the kernel's own, element by element.
      kernel(kc, ap, P.ars, P.acs, bp, rsb, tile, NR, T(1), T(0));
      for (int r = 0; r < h; ++r)
        for (int64_t q = 0; q < w; ++q) {
          T& cv = cp[r * P.ldc + q];
          const T acc = tile[r * NR + q];
          cv = beta == T(0) ? P.alpha * acc : std::fma(P.alpha, acc, beta * cv);
        }
    }
  }
}

/// C = beta C for the products that read neither A nor B (k == 0 or alpha == 0).
template <class T>
void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0))
      std::fill(ci, ci + n, T(0));  // overwrite, so NaNs in C do not survive (BLAS)
    else
      for (int64_t j = 0; j < n; ++j) ci[j] *= beta;
  }
}

/// Columns of C per outer block: the shared packed B panel (kc x nc) stays under 4 MiB.
template <class T>
int64_t column_block(const MicroKernels<T>& ks) {
  return std::max<int64_t>(ks.nr, ((int64_t{4} << 20) / (static_cast<int64_t>(sizeof(T)) * ks.kc)) / ks.nr * ks.nr);
}

/// How a product splits C into tasks: tm x tn blocks, about 8 for a large product, fewer for
/// a smaller one, one below kParallelWork; an even number when more than one (two threads get
/// equal shares), each with as many register tiles as the others, give or take one. The shape
/// alone sets them (and they do not change any result anyway). w: C's columns in this block.
struct TaskGrid {
  int64_t tm, tn;
};
TaskGrid task_grid(int64_t m, int64_t w, int64_t work, int mr, int nr, int mc) {
  const int64_t row_tiles = cdiv(m, mr), col_tiles = cdiv(w, nr);
  int64_t tm = cdiv(m, mc), tn = 1;
  const int64_t want = work < kParallelWork ? 1 : work < 8 * kParallelWork ? 4 : 8;
  while (tm * tn < want) {
    const double rows = static_cast<double>(row_tiles) / static_cast<double>(tm);
    const double cols = static_cast<double>(col_tiles) / static_cast<double>(tn);
    if (rows >= cols && rows >= 2)
      ++tm;
    else if (cols >= 2)
      ++tn;
    else
      break;
  }
  tm = std::min(tm, row_tiles);
  if (tm * tn > 1 && tm * tn % 2 == 1) {
    if (tm < row_tiles)
      ++tm;
    else if (tn < col_tiles)
      ++tn;
  }
  return {tm, tn};
}

/// The float/double product of gemm's contract, m, n, k > 0 and alpha != 0, on kernels of
/// MR x NR tiles.
template <int MR, int NR, class T>
void fast_gemm(const MicroKernels<T>& ks, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  constexpr int mr = MR, nr = NR;
  // Packing B costs a copy of it per depth block and pays back over the row tiles reading
  // it. Transposed B is always packed (the kernel needs its columns contiguous). Untransposed
  // B is read in place for a few row tiles, or when it fits in half of L2 and its row stride
  // is not a multiple of 256 bytes (such rows fall on at most 16 of L1's 64 sets, and the
  // micro-panel would not stay there): no copy, and one parallel region per product instead
  // of two per depth block.
  const int64_t b_row_bytes = ldb * static_cast<int64_t>(sizeof(T));
  const bool packed_b =
      tb || (m > 4 * mr && (k * n * static_cast<int64_t>(sizeof(T)) > (int64_t{512} << 10) || b_row_bytes % 256 == 0));
  // A read in place costs nothing up front but is read from L2 with A's row stride; packing
  // pays where that stride maps A's rows onto few cache sets (a multiple of 4 KiB) and for
  // large products. (Measured on Zen 3: in place is faster up to n = 512.)
  const bool packed_a = n > 2 * nr && (n >= 1024 || (lda * static_cast<int64_t>(sizeof(T))) % 4096 == 0);
  const Product<T> P{ks, m, n, k, alpha, a, ta ? 1 : lda, ta ? lda : 1, b, tb ? 1 : ldb, tb ? ldb : 1, c, ldc,
                     packed_a};
  // Depth blocks: equal, at most kc deep, a function of k alone (each element's chain of
  // multiply-adds, and so its rounding, is fixed by them).
  const int64_t nkb = cdiv(k, ks.kc), kcb = cdiv(k, nkb);
  const int64_t work = m * n * k;
  const int64_t nc = column_block(ks);
  for (int64_t jc = 0; jc < n; jc += nc) {
    const int64_t w = std::min(nc, n - jc);
    const int64_t row_tiles = cdiv(m, mr), col_tiles = cdiv(w, nr);
    const TaskGrid grid = task_grid(m, w, work, mr, nr, ks.mc);
    const int64_t tm = grid.tm, tn = grid.tn, ntasks = tm * tn;
    auto task = [&](int64_t t, int64_t p0, int64_t kc, T beta_k, const T* bpanel) {
      const int64_t ti = t / tn, tj = t % tn;
      const int64_t i0 = ti * row_tiles / tm * mr, i1 = std::min(m, (ti + 1) * row_tiles / tm * mr);
      const int64_t j0 = tj * col_tiles / tn * nr, j1 = std::min(w, (tj + 1) * col_tiles / tn * nr);
      run_block<MR, NR>(P, i0, i1 - i0, jc + j0, j1 - j0, p0, kc, beta_k, bpanel, jc);
    };
    if (packed_b) {
      T* bpanel = scratch<T>(1, kcb * round_up(w, nr));
      const int64_t npanels = cdiv(w, nr);
      for (int64_t kb = 0; kb < nkb; ++kb) {
        const int64_t p0 = kb * kcb, kc = std::min(kcb, k - p0);
        const T beta_k = kb == 0 ? beta : T(1);
        parallel_for(npanels, ntasks == 1 ? npanels : std::max<int64_t>(1, npanels / 8),
                     [&](int64_t first, int64_t last) { pack_b_panels<NR>(P, jc, w, first, last, p0, kc, bpanel); });
        parallel_for(ntasks, 1, [&](int64_t first, int64_t last) {
          for (int64_t t = first; t < last; ++t) task(t, p0, kc, beta_k, bpanel);
        });
      }
    } else {
      parallel_for(ntasks, 1, [&](int64_t first, int64_t last) {
        for (int64_t t = first; t < last; ++t)
          for (int64_t kb = 0; kb < nkb; ++kb) {
            const int64_t p0 = kb * kcb;
            task(t, p0, std::min(kcb, k - p0), kb == 0 ? beta : T(1), nullptr);
          }
      });
    }
  }
}

// ---- matrix-vector products (m == 1 or n == 1) ----------------------------------------------
// A register tile would be mostly padding there, and packing would cost as much as the
// product: these are dot products or axpy sweeps over the matrix, memory-bound.

#if defined(__AVX2__) && defined(__FMA__)
template <class T>
struct Simd;
template <>
struct Simd<float> {
  using V = __m256;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
template <>
struct Simd<double> {
  using V = __m256d;
  static constexpr int W = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
};
#endif

/// sum over p < k of a[p] * x[p], in a fixed order (four vector partial sums, then the tail).
template <class T>
T dot(const T* a, const T* x, int64_t k) {
  int64_t p = 0;
  T sum = T(0);
#if defined(__AVX2__) && defined(__FMA__)
  using S = Simd<T>;
  constexpr int W = S::W;
  typename S::V s0 = S::zero(), s1 = S::zero(), s2 = S::zero(), s3 = S::zero();
  for (; p + 4 * W <= k; p += 4 * W) {
    s0 = S::fma(S::load(a + p), S::load(x + p), s0);
    s1 = S::fma(S::load(a + p + W), S::load(x + p + W), s1);
    s2 = S::fma(S::load(a + p + 2 * W), S::load(x + p + 2 * W), s2);
    s3 = S::fma(S::load(a + p + 3 * W), S::load(x + p + 3 * W), s3);
  }
  for (; p + W <= k; p += W) s0 = S::fma(S::load(a + p), S::load(x + p), s0);
  alignas(32) T lanes[W];
  S::store(lanes, S::add(S::add(s0, s1), S::add(s2, s3)));
  for (int l = 0; l < W; ++l) sum += lanes[l];
#endif
  for (; p < k; ++p) sum = std::fma(a[p], x[p], sum);
  return sum;
}

/// acc[r] = fma(x[q], rows[q][r], acc[r]) for q = 0 .. Q-1 in turn, r < len (the same
/// roundings in every lane as one row at a time; Q rows per pass over acc).
template <int Q, class T>
void axpy_rows(const T* x, const T* const* rows, T* acc, int64_t len) {
  int64_t r = 0;
#if defined(__AVX2__) && defined(__FMA__)
  using S = Simd<T>;
  typename S::V xv[Q];
  for (int q = 0; q < Q; ++q) xv[q] = S::set1(x[q]);
  for (; r + S::W <= len; r += S::W) {
    typename S::V v = S::load(acc + r);
    for (int q = 0; q < Q; ++q) v = S::fma(xv[q], S::load(rows[q] + r), v);
    S::store(acc + r, v);
  }
#endif
  for (; r < len; ++r)
    for (int q = 0; q < Q; ++q) acc[r] = std::fma(x[q], rows[q][r], acc[r]);
}

/// c[r * cs] = alpha * sum_p M(r, p) x[p * xs] + beta * c[r * cs] (gemm's beta rules) for
/// r < R, with M(r, p) = mat[r * rs + p * ps]. Each r's sum has one fixed order, whatever
/// the split over threads. Half and BFloat16 (S) compute in float (T): the vector, and the
/// matrix a row (or a block of rows) at a time, widened into per-thread buffers, so that the
/// sums are those of the float product on widened operands, rounded once into C.
template <class S, class T>
void matvec(int64_t R, int64_t k, const S* mat, int64_t rs, int64_t ps, const S* x, int64_t xs, T alpha, T beta,
            S* c, int64_t cs) {
  constexpr bool kWiden = !std::is_same_v<S, T>;
  const T* xv = nullptr;
  if constexpr (kWiden) {
    T* buf = scratch<T>(1, k);
    for (int64_t p = 0; p < k; ++p) buf[p] = widen<S, T>(x[p * xs]);
    xv = buf;
  } else {
    xv = x;
    if (xs != 1 && k > 1) {
      T* buf = scratch<T>(1, k);
      for (int64_t p = 0; p < k; ++p) buf[p] = x[p * xs];
      xv = buf;
    }
  }
  auto finish = [&](int64_t r, T acc) {
    S& cv = c[r * cs];
    cv = static_cast<S>(beta == T(0) ? alpha * acc : std::fma(alpha, acc, beta * widen<S, T>(cv)));
  };
  const int64_t grain = std::max<int64_t>(64, kParallelWork / std::max<int64_t>(1, k));
  if (ps == 1 || k == 1) {  // each output a dot product of contiguous vectors
    parallel_for(R, grain, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const S* row = mat + r * rs;
        if constexpr (kWiden) {
          T* wide = scratch<T>(3, k);
          widen_copy(row, wide, k);
          finish(r, dot(static_cast<const T*>(wide), xv, k));
        } else {
          finish(r, dot(row, xv, k));
        }
      }
    });
  } else if (rs == 1) {  // sweep the matrix row by row, accumulating a block of outputs
    parallel_for(R, grain, [&](int64_t first, int64_t last) {
      constexpr int64_t kBlock = 2048;
      T* acc = scratch<T>(0, kBlock);
      T* wide = kWiden ? scratch<T>(3, 4 * kBlock) : nullptr;
      // Row p's block [r0, r0 + len) as T: in place, or widened into wide's slot q.
      auto row_of = [&](int64_t p, int64_t r0, int64_t len, int q) -> const T* {
        if constexpr (kWiden) {
          widen_copy(mat + p * ps + r0, wide + q * kBlock, len);
          return wide + q * kBlock;
        } else {
          (void)len, (void)q;
          return mat + p * ps + r0;
        }
      };
      for (int64_t r0 = first; r0 < last; r0 += kBlock) {
        const int64_t len = std::min(kBlock, last - r0);
        std::fill(acc, acc + len, T(0));
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
          const T* rows[4] = {row_of(p, r0, len, 0), row_of(p + 1, r0, len, 1), row_of(p + 2, r0, len, 2),
                              row_of(p + 3, r0, len, 3)};
          axpy_rows<4>(xv + p, rows, acc, len);
        }
        for (; p < k; ++p) {
          const T* row = row_of(p, r0, len, 0);
          axpy_rows<1>(xv + p, &row, acc, len);
        }
        for (int64_t r = 0; r < len; ++r) finish(r0 + r, acc[r]);
      }
    });
  } else {
    parallel_for(R, grain, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        T acc = T(0);
        for (int64_t p = 0; p < k; ++p) acc = std::fma(widen<S, T>(mat[r * rs + p * ps]), xv[p], acc);
        finish(r, acc);
      }
    });
  }
}

/// float and double: ember's blocked product on the active kernels.
template <class T>
void float_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                int64_t ldb, T beta, T* c, int64_t ldc) {
  if (k == 0 || alpha == T(0)) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  const int64_t ars = ta ? 1 : lda, acs = ta ? lda : 1, brs = tb ? 1 : ldb, bcs = tb ? ldb : 1;
  if (n == 1) {  // C's column = op(A) x
    matvec(m, k, a, ars, acs, b, brs, alpha, beta, c, ldc);
    return;
  }
  if (m == 1) {  // C's row = op(B)^T x
    matvec(n, k, b, bcs, brs, a, acs, alpha, beta, c, 1);
    return;
  }
  const gemm_detail::Kernels* kernels = active_kernels();
  if (kernels == nullptr) {  // no kernel for this CPU or build: the plain loop
    gemm_reference<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const MicroKernels<T>& ks = [&]() -> const MicroKernels<T>& {
    if constexpr (std::is_same_v<T, float>)
      return kernels->f32;
    else
      return kernels->f64;
  }();
  // The tile shapes gemm_kernel_<isa>.cpp define: AVX2 6 x 2 ymm, AVX-512 12 x 2 zmm.
  constexpr int kLanes256 = 32 / static_cast<int>(sizeof(T));
  if (ks.mr == 6 && ks.nr == 2 * kLanes256)
    fast_gemm<6, 2 * kLanes256>(ks, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if (ks.mr == 12 && ks.nr == 4 * kLanes256)
    fast_gemm<12, 4 * kLanes256>(ks, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    EMBER_CHECK(false, "gemm: no driver for ", ks.mr, " x ", ks.nr, " micro-kernels");
}

/// Integer products wrap around as PyTorch's do; unsigned arithmetic makes that defined
/// behaviour in C++ (32 bits at least, so small types do not promote to signed int).
template <class T>
using WrapInt = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

template <class T>
void integer_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  using W = WrapInt<T>;
  const int64_t a_col = ta ? lda : 1, a_row = ta ? 1 : lda;  // strides of op(A)
  const int64_t b_col = tb ? ldb : 1, b_row = tb ? 1 : ldb;  // strides of op(B)
  auto row = [&](int64_t i) {
    T* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == T(0) ? T(0) : static_cast<T>(W(beta) * W(ci[j]));
    for (int64_t p = 0; p < k; ++p) {
      W aip = W(alpha) * W(a[i * a_row + p * a_col]);
      const T* bp = b + p * b_row;
      for (int64_t j = 0; j < n; ++j) ci[j] = static_cast<T>(W(ci[j]) + aip * W(bp[j * b_col]));
    }
  };
  int64_t grain = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, n * k));
  parallel_for(m, grain, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) row(i);
  });
}

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

/// Half and BFloat16: float sums, one rounding into C. BFloat16 runs on vdpbf16ps where
/// gemm_isa() is avx512_bf16; everything else widens to float on the float kernels, with the
/// sums float_gemm would compute on the widened matrices.
template <class S>
void low_precision_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const S* a, int64_t lda,
                        const S* b, int64_t ldb, float beta, S* c, int64_t ldc) {
  if (k == 0 || alpha == 0.0f) {
    lowp_scale_c(m, n, beta, c, ldc);
    return;
  }
  const int64_t ars = ta ? 1 : lda, acs = ta ? lda : 1, brs = tb ? 1 : ldb, bcs = tb ? ldb : 1;
  if (n == 1) {  // C's column = op(A) x
    matvec(m, k, a, ars, acs, b, brs, alpha, beta, c, ldc);
    return;
  }
  if (m == 1) {  // C's row = op(B)^T x
    matvec(n, k, b, bcs, brs, a, acs, alpha, beta, c, 1);
    return;
  }
  const LowpOperands<S> P{a, ars, acs, b, brs, bcs};
  if constexpr (std::is_same_v<S, BFloat16>) {
    if (const gemm_detail::Bf16Kernels* bk = active_bf16_kernels()) {
      EMBER_CHECK(bk->mr == 12 && bk->nr == 32, "gemm: no driver for ", bk->mr, " x ", bk->nr, " BFloat16 micro-kernels");
      lowp_blocked(Bf16Dot<12, 32>{*bk, alpha, beta}, P, m, n, k, c, ldc);
      return;
    }
  }
  const gemm_detail::Kernels* kernels = active_kernels();
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

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, opmath_t<T> alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, opmath_t<T> beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    float_gemm<T>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (is_float_v<T>)
    low_precision_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    integer_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, opmath_t<T> alpha,
                    const T* a, int64_t lda, const T* b, int64_t ldb, opmath_t<T> beta, T* c, int64_t ldc) {
  using Acc = std::conditional_t<is_float_v<T>, double, WrapInt<T>>;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      Acc sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        T av = trans_a ? a[p * lda + i] : a[i * lda + p];
        T bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        sum +=
            static_cast<Acc>(static_cast<opmath_t<T>>(av)) * static_cast<Acc>(static_cast<opmath_t<T>>(bv));
      }
      Acc r = static_cast<Acc>(alpha) * sum;
      if (beta != opmath_t<T>(0))
        r += static_cast<Acc>(beta) * static_cast<Acc>(static_cast<opmath_t<T>>(c[i * ldc + j]));
      c[i * ldc + j] = static_cast<T>(static_cast<opmath_t<T>>(r));
    }
  }
}

// Every dtype but bool (PyTorch has no boolean matrix product either).
#define EMBER_INSTANTIATE_GEMM(T)                                                                        \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, opmath_t<T>, const T*, int64_t, const T*, \
                        int64_t, opmath_t<T>, T*, int64_t);                                              \
  template void gemm_reference<T>(bool, bool, int64_t, int64_t, int64_t, opmath_t<T>, const T*, int64_t, \
                                  const T*, int64_t, opmath_t<T>, T*, int64_t);
EMBER_INSTANTIATE_GEMM(uint8_t)
EMBER_INSTANTIATE_GEMM(int8_t)
EMBER_INSTANTIATE_GEMM(int16_t)
EMBER_INSTANTIATE_GEMM(int32_t)
EMBER_INSTANTIATE_GEMM(int64_t)
EMBER_INSTANTIATE_GEMM(Half)
EMBER_INSTANTIATE_GEMM(BFloat16)
EMBER_INSTANTIATE_GEMM(float)
EMBER_INSTANTIATE_GEMM(double)
#undef EMBER_INSTANTIATE_GEMM

// ---- tensors -----------------------------------------------------------------------------
namespace {

/// How one operand reaches gemm: the tensor read (the input itself, or a contiguous copy
/// when neither of its matrix strides is 1), whether its matrices are stored transposed,
/// their leading dimension, and the stride between batch items (0 for a 2-D operand).
struct BlasOperand {
  Tensor t;
  bool trans;
  int64_t ld, batch_stride;
};

BlasOperand blas_operand(const Tensor& x) {
  const int64_t d = x.dim(), r = x.size(d - 2), c = x.size(d - 1);
  const int64_t s0 = x.stride(d - 2), s1 = x.stride(d - 1), bs = d == 3 ? x.stride(0) : 0;
  // A stride is free when its dimension has size 1; a leading dimension must cover a row.
  if ((c == 1 || s1 == 1) && (r == 1 || s0 >= std::max<int64_t>(1, c)))
    return {x, false, r == 1 ? std::max<int64_t>(1, c) : s0, bs};
  if ((r == 1 || s0 == 1) && (c == 1 || s1 >= std::max<int64_t>(1, r)))
    return {x, true, c == 1 ? std::max<int64_t>(1, r) : s1, bs};
  Tensor y = x.contiguous();
  return {y, false, std::max<int64_t>(1, c), d == 3 ? r * c : 0};
}

}  // namespace

void addmm_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  EMBER_CHECK(out.is_contiguous(), "addmm_out: the output must be contiguous");
  if (out.numel() == 0) return;
  NoGradGuard no_grad;  // copies made here belong to no graph
  const BlasOperand A = blas_operand(a), B = blas_operand(b);
  const int64_t d = out.dim(), nb = d == 3 ? out.size(0) : 1;
  const int64_t m = out.size(d - 2), n = out.size(d - 1), k = a.size(d - 1);
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      detail::throw_error("addmm_out: bool matrices cannot be multiplied");
    } else {
      using M = opmath_t<T>;
      const M al = alpha.to<M>(), be = beta.to<M>();
      const T* pa = A.t.template data_ptr<T>();
      const T* pb = B.t.template data_ptr<T>();
      T* pc = out.data_ptr<T>();
      auto item = [&](int64_t i) {
        gemm<T>(A.trans, B.trans, m, n, k, al, pa + i * A.batch_stride, A.ld, pb + i * B.batch_stride, B.ld,
                be, pc + i * m * n, n);
      };
      if (nb == 1) {
        item(0);  // one product: gemm splits it itself
        return;
      }
      // A batch: items in parallel (gemm stays on its thread inside a parallel region).
      int64_t grain = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, m * n * k));
      parallel_for(nb, grain, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) item(i);
      });
    }
  });
}

}  // namespace ember::cpu
