// The register-blocked micro-kernels behind cpu::gemm's float and double products, one set
// per instruction set (gemm_kernel_avx2.cpp, gemm_kernel_avx512.cpp, both built from
// gemm_kernel.inc); gemm.cpp owns everything around them (packing, cache blocking, threads;
// with gemm_internal.h, gemm_16bit.cpp, gemm_matvec.cpp) and picks a set at run time (gemm_isa.h).
//
// This header is included by the files compiled with AVX-512 flags, so it declares only
// types and functions: an inline function here could be compiled with those flags and kept
// by the linker for the whole library.
#pragma once

#include <cstdint>

namespace ember::cpu::gemm_detail {

/// One micro-tile of C: for i < M (the kernel's row count) and j < nr,
///   acc(i, j) = sum over p < kc of A(i, p) * B(p, j), the products added in order p = 0, 1, ...
///               with one fused multiply-add each, starting from 0,
///   C(i, j)   = alpha * acc(i, j)                        when beta == 0 (C is not read),
///               fma(alpha, acc(i, j), beta * C(i, j))    otherwise,
/// with A(i, p) = a[i * rsa + p * csa] (or, for the packed form, a[p * mr + i]),
/// B(p, j) = b[p * rsb + j] (nr columns, contiguous) and C(i, j) = c[i * ldc + j].
/// Every element follows the same sequence of roundings whatever the tile's position, so
/// the driver's blocking, its edge tiles and the thread count never change a result.
template <class T>
using MicroKernel = void (*)(int64_t kc, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, T* c,
                             int64_t ldc, T alpha, T beta);

/// An instruction set's kernels for one type and the blocking they were written for.
template <class T>
struct MicroKernels {
  int mr;  // rows of a full micro-tile
  int nr;  // columns of every micro-tile (the kernel always writes nr columns)
  int kc;  // depth of one cache block (the B micro-panel kc x nr stays in L1)
  int mc;  // rows of A per cache block (mc x kc stays in L2), a multiple of mr
  MicroKernel<T> packed[16];  // [M - 1]: M rows (1..mr), A packed (rsa, csa ignored)
  MicroKernel<T> strided[16];  // [M - 1]: M rows, A read in place through rsa, csa
};

struct Kernels {
  MicroKernels<float> f32;
  MicroKernels<double> f64;
};

/// Each file's kernels; nullptr when the build compiled it without its instruction set
/// (not x86-64, or a compiler without the flags). Call one only where the CPU has its
/// instruction set: the accessor itself may use it.
const Kernels* avx2_kernels();
const Kernels* avx512_kernels();
/// The AVX-512 kernels' shapes (12-row, 2-vector tiles) built from pairs of AVX2 vectors:
/// lets the tests run the AVX-512 blocking on a CPU without AVX-512.
const Kernels* avx2_wide_kernels();

/// Tests only: every later float/double product runs on `kernels` (nullptr: back to the
/// instruction set gemm_isa() names). Call it while no product is running.
void use_kernels_for_testing(const Kernels* kernels);

/// The BFloat16 micro-kernel on vdpbf16ps (gemm_kernel_avx512_bf16.cpp; the panel layout and
/// a scalar emulation are in gemm_bf16.h): for i < mr, j < nr,
///   c[i * ldc + j] = c[i * ldc + j] (accumulate) or +0, then one vdpbf16ps step per pair word
///                    q < kp with the words a[q * mr + i] and b[q * nr + j].
/// The tile is always full (the driver pads its panels and stages C in float).
using Bf16MicroKernel = void (*)(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc,
                                 bool accumulate);

struct Bf16Kernels {
  int mr;  // rows of the micro-tile
  int nr;  // columns of the micro-tile
  int kc;  // depth of one cache block (even: blocks start on a pair)
  int mc;  // rows of A per cache block, a multiple of mr
  Bf16MicroKernel tile;
};

/// nullptr when the build compiled the file without AVX512_BF16. Call it (and its kernel)
/// only where the CPU has AVX512_BF16.
const Bf16Kernels* avx512_bf16_kernels();

/// Tests only: every later BFloat16 product (that is not a matrix-vector product) runs on
/// `kernels`, whatever gemm_isa() says (nullptr: back to gemm_isa()'s choice). Call it while
/// no product is running.
void use_bf16_kernels_for_testing(const Bf16Kernels* kernels);

}  // namespace ember::cpu::gemm_detail
