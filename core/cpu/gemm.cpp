// GEMM on the CPU: ember's own blocked product for float and double, a plain loop for
// integers (PyTorch multiplies integer matrices on the CPU too), the instruction set dispatch
// and the tensor front end that maps strided operands onto it. Half and BFloat16 compute in
// float in gemm_16bit.cpp (operands widened while packed, or BFloat16 pairs on vdpbf16ps:
// gemm_bf16.h), matrix-vector products in gemm_matvec.cpp; what they share with the blocked
// product here (scratch buffers, packing, the task split) is in gemm_internal.h.
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
#include <type_traits>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/gemm_isa.h"
#include "ember/core/cpu/gemm_internal.h"
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

/// The kernels products run on; nullptr where none runs here (then a plain loop computes).
const gemm_detail::Kernels* gemm_detail::active_kernels() {
  if (const gemm_detail::Kernels* k = g_test_kernels.load(std::memory_order_relaxed)) return k;
  const GemmIsa isa = isa_slot().load(std::memory_order_relaxed);
  return gemm_isa_available(isa) ? compiled_kernels(isa) : nullptr;
}

/// The vdpbf16ps kernel BFloat16 products run on; nullptr: they widen to float instead.
const gemm_detail::Bf16Kernels* gemm_detail::active_bf16_kernels() {
  if (const gemm_detail::Bf16Kernels* k = g_test_bf16_kernels.load(std::memory_order_relaxed)) return k;
  const GemmIsa isa = isa_slot().load(std::memory_order_relaxed);
  return isa == GemmIsa::kAvx512Bf16 && gemm_isa_available(isa) ? avx512_bf16_kernels() : nullptr;
}

namespace {

using gemm_detail::active_kernels;
using gemm_detail::cdiv;
using gemm_detail::kParallelWork;
using gemm_detail::low_precision_gemm;
using gemm_detail::matvec;
using gemm_detail::MicroKernel;
using gemm_detail::MicroKernels;
using gemm_detail::pack_a;
using gemm_detail::pack_b;
using gemm_detail::round_up;
using gemm_detail::scratch;
using gemm_detail::task_grid;
using gemm_detail::TaskGrid;

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
