// Fused scaled-dot-product attention on CUDA (cuda/attention.h), flash-attention-2 style: the
// [L, S] score matrix is never materialised; each block keeps one tile of queries and one tile
// of keys in shared memory (as float; layout, tiles and grid from cuda/attention_plan.h).
//
//   forward   per query tile, over the key tiles it can see: S = Q K^T * scale + mask (-inf
//             where causal hides a key), the online softmax (running max m and sum l per row,
//             the output rescaled by exp(m_old - m_new) when the max grows), O += P V; at the
//             end out = O / l and logsumexp = m + log l. A row that sees no key keeps m = -inf
//             and l = 0: out 0, logsumexp -inf, no NaN.
//   backward  D = rowsum(grad_out * out) (a warp per row), then P = exp(S - logsumexp)
//             recomputed tile by tile, dP = grad_out V^T, dS = P (dP - D), and
//               dq kernel   per query tile over key tiles:   grad_q = scale dS K
//               dkv kernel  per key tile over query tiles:   grad_v = P^T grad_out,
//                                                            grad_k = scale dS^T Q
//             Two kernels rather than atomicAdd of grad_q into a float scratch: every output
//             element is summed by one thread in a fixed order, so the backward is bitwise
//             reproducible (what use_deterministic_algorithms asks for), for the price of
//             computing Q K^T and grad_out V^T twice.
//   dropout   (flash attention's) the forward sums the undropped probabilities into l but
//             multiplies each into O by its factor Z (0, or 1 / (1 - p) when kept); the
//             backward regenerates Z from the same (seed, offset) and takes dV = (P o Z)^T dO,
//             dS = P o (dP o Z - D), D unchanged (rowsum(dP o Z o P) = dO . O). Each thread
//             draws the Philox block of its own element (attn_dropout::kept, shared with the
//             CPU kernel), four times the blocks a thread per four elements would draw.
//
// All arithmetic is float (float16 and bfloat16 are converted on load to shared memory and
// rounded once on the store). The products are plain FMA loops over shared memory, each
// thread computing whole dot products: correct and simple rather than fast. Speed ideas, none
// done: tensor cores (mma.sync / wgmma on 16-bit tiles, keeping them 16-bit in shared memory),
// register micro-tiles (each thread a 4x4 block of S and of O), cp.async / TMA double
// buffering of the next K/V tile, exp2 with log2(e) folded into the scale, and splitting long
// key ranges over several blocks (split-K) when B * H * query tiles is below the SM count.
#include <cuda_runtime.h>

#include <cstdint>

#include "ember/core/attention_dropout.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor.h"
#include "ember/cuda/attention.h"
#include "ember/cuda/attention_math.h"
#include "ember/cuda/attention_plan.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda {
namespace {

constexpr int kWarps = kAttnThreads / 32;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// A call's dropout as the kernels read it (core/attention_dropout.h).
struct AttnDropoutArgs {
  bool on = false;
  uint64_t seed = 0, offset = 0, threshold = 0;
  float scale = 1.f;  // 1 / (1 - p), 0 for p = 1

  /// The factor Z of element (bh, i, j) of the [BH, L, S] attention matrix: 1 without
  /// dropout, else 0 or scale as attn_dropout::kept decides it (the CPU kernel's decision).
  __device__ float factor(const AttnPlan& p, int64_t bh, int64_t i, int64_t j) const {
    if (!on) return 1.f;
    const auto n = static_cast<uint64_t>((bh * p.L + i) * p.S + j);
    return attn_dropout::kept(seed, offset, n, threshold) ? scale : 0.f;
  }
};

/// The inputs every kernel reads, offset to nothing yet (the kernels add bh's slice).
template <class T>
struct AttnInputs {
  const device_t<T>* q;     // [BH, L, E]
  const device_t<T>* k;     // [BH, S, E]
  const device_t<T>* v;     // [BH, S, Ev]
  const device_t<T>* mask;  // read through ms; nullptr: no mask
  AttnMaskStrides ms;
  float scale;
  AttnDropoutArgs drop;
};

/// Rows [row0, row0 + t) of a dense [rows][cols] matrix into dst [t][ld] as float, zeros for
/// rows past `rows` (so the padding rows of a last tile add nothing to any product).
template <class T>
__device__ void load_rows(float* dst, int ld, const device_t<T>* src, int cols, int64_t row0, int64_t rows,
                          int t) {
  const int n = t * cols;
  for (int idx = threadIdx.x; idx < n; idx += kAttnThreads) {
    const int r = idx / cols, c = idx % cols;
    const int64_t g = row0 + r;
    dst[r * ld + c] = g < rows ? load_opmath<T>(src + g * cols + c) : 0.f;
  }
}

/// Per-row values of a [BH * L] float vector for rows [row0, row0 + t), `pad` past L.
__device__ void load_row_values(float* dst, const float* src, int64_t row0, int64_t rows, int t, float pad) {
  for (int r = threadIdx.x; r < t; r += kAttnThreads) dst[r] = row0 + r < rows ? src[row0 + r] : pad;
}

__device__ __forceinline__ float dot(const float* a, const float* b, int n) {
  float s = 0.f;
  for (int e = 0; e < n; ++e) s = fmaf(a[e], b[e], s);
  return s;
}

/// The score of query i and key j of slice bh: q_i . k_j * scale + mask, -inf when j is not
/// visible to i (causal) or either is past the end (the mask is read only for real pairs).
template <class T>
__device__ float score(const AttnPlan& p, const AttnInputs<T>& in, int64_t bh, const float* qrow,
                       const float* krow, int64_t i, int64_t j) {
  if (!p.visible(i, j)) return neg_inf();
  float s = dot(qrow, krow, static_cast<int>(p.E)) * in.scale;
  if (in.mask != nullptr) s += load_opmath<T>(in.mask + in.ms.offset(bh, i, j));
  return s;
}

// ---- forward --------------------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kAttnThreads)
    attn_forward(AttnPlan p, AttnInputs<T> in, device_t<T>* out, float* lse) {
  extern __shared__ float attn_smem[];
  const int64_t bh = p.bh_of(blockIdx.y, blockIdx.z);
  if (bh >= p.bh) return;  // the whole block: no barrier is skipped by part of it
  const int t = p.tile, E = static_cast<int>(p.E), Ev = static_cast<int>(p.Ev);
  const int ld_qk = p.ld_qk, ld_v = p.ld_v, ld_s = p.ld_s;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t qt = p.tile_of(blockIdx.x), i0 = qt * t;
  float *sq = attn_smem + p.smem.q, *sk = attn_smem + p.smem.k, *sv = attn_smem + p.smem.v;
  float *so = attn_smem + p.smem.acc, *sp = attn_smem + p.smem.p;
  float *sm = attn_smem + p.smem.row0, *sl = attn_smem + p.smem.row1, *salpha = attn_smem + p.smem.row2;

  load_rows<T>(sq, ld_qk, in.q + bh * p.L * E, E, i0, p.L, t);
  for (int idx = threadIdx.x; idx < t * Ev; idx += kAttnThreads) so[(idx / Ev) * ld_v + idx % Ev] = 0.f;
  for (int r = threadIdx.x; r < t; r += kAttnThreads) sm[r] = neg_inf(), sl[r] = 0.f;

  const int64_t k_end = p.key_tile_end(qt);
  for (int64_t kt = 0; kt < k_end; ++kt) {
    const int64_t j0 = kt * t;
    load_rows<T>(sk, ld_qk, in.k + bh * p.S * E, E, j0, p.S, t);
    load_rows<T>(sv, ld_v, in.v + bh * p.S * Ev, Ev, j0, p.S, t);
    __syncthreads();  // Q (first pass), K, V and the row state are in place

    for (int idx = threadIdx.x; idx < t * t; idx += kAttnThreads) {
      const int r = idx / t, c = idx % t;
      sp[r * ld_s + c] = score<T>(p, in, bh, sq + r * ld_qk, sk + c * ld_qk, i0 + r, j0 + c);
    }
    __syncthreads();

    // The online softmax, a warp per row: the new max, the tile's probabilities against it
    // (summed undropped, multiplied into O dropped), and the factor that rescales what was
    // summed against the old max.
    for (int r = warp; r < t; r += kWarps) {
      float mx = neg_inf();
      for (int c = lane; c < t; c += 32) mx = fmaxf(mx, sp[r * ld_s + c]);
      mx = warp_max(mx);
      const float m_old = sm[r], m_new = attn_math::new_max(m_old, mx);
      float sum = 0.f;
      for (int c = lane; c < t; c += 32) {
        const float e = attn_math::prob_against(sp[r * ld_s + c], m_new);
        sp[r * ld_s + c] = e != 0.f ? e * in.drop.factor(p, bh, i0 + r, j0 + c) : 0.f;
        sum += e;
      }
      sum = warp_sum(sum);
      if (lane == 0) {
        const float alpha = attn_math::rescale(m_old, m_new);
        salpha[r] = alpha;
        sl[r] = sl[r] * alpha + sum;
        sm[r] = m_new;
      }
    }
    __syncthreads();

    for (int idx = threadIdx.x; idx < t * Ev; idx += kAttnThreads) {
      const int r = idx / Ev, d = idx % Ev;
      float acc = 0.f;
      for (int c = 0; c < t; ++c) acc = fmaf(sp[r * ld_s + c], sv[c * ld_v + d], acc);
      so[r * ld_v + d] = so[r * ld_v + d] * salpha[r] + acc;
    }
    __syncthreads();  // before the next tile overwrites K, V and P
  }
  __syncthreads();  // no key tile at all (S == 0): the initial state is what is written

  device_t<T>* orow = out + (bh * p.L + i0) * Ev;
  for (int idx = threadIdx.x; idx < t * Ev; idx += kAttnThreads) {
    const int r = idx / Ev, d = idx % Ev;
    if (i0 + r >= p.L) continue;
    orow[static_cast<int64_t>(r) * Ev + d] = to_stored<T>(attn_math::finish_out(so[r * ld_v + d], sl[r]));
  }
  for (int r = threadIdx.x; r < t; r += kAttnThreads)
    if (i0 + r < p.L) lse[bh * p.L + i0 + r] = attn_math::finish_lse(sm[r], sl[r]);
}

// ---- backward -------------------------------------------------------------------------------------

/// D[row] = sum_d grad_out[row, d] * out[row, d], a warp per row of the [rows][Ev] matrices.
template <class T>
__global__ void __launch_bounds__(kAttnThreads)
    attn_backward_rowdot(int64_t rows, int Ev, const device_t<T>* dout, const device_t<T>* out, float* D) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {  // warp-uniform: every lane shuffles
    float s = 0.f;
    for (int d = lane; d < Ev; d += 32)
      s = fmaf(load_opmath<T>(dout + row * Ev + d), load_opmath<T>(out + row * Ev + d), s);
    s = warp_sum(s);
    if (lane == 0) D[row] = s;
  }
}

/// dS of the pair (r, c) of the tiles in shared memory: P (dP Z - D) with dP = dO_r . v_c and
/// the dropout factor Z (1 without dropout); 0 for pairs that are not visible or padding.
/// P Z, what the forward multiplied into O, is stored to pr when pr is given.
template <class T>
__device__ float score_grad(const AttnPlan& p, const AttnInputs<T>& in, int64_t bh, const float* sq,
                            const float* sdo, const float* sk, const float* sv, const float* slse,
                            const float* sD, int r, int c, int64_t i, int64_t j, float* pr) {
  float P = 0.f, ds = 0.f;
  if (p.visible(i, j)) {
    P = attn_math::prob_from_lse(score<T>(p, in, bh, sq + r * p.ld_qk, sk + c * p.ld_qk, i, j), slse[r]);
    const float dp = dot(sdo + r * p.ld_v, sv + c * p.ld_v, static_cast<int>(p.Ev));
    const float z = P != 0.f ? in.drop.factor(p, bh, i, j) : 1.f;
    ds = P * (dp * z - sD[r]);
    P *= z;
  }
  if (pr != nullptr) *pr = P;
  return ds;
}

template <class T>
__global__ void __launch_bounds__(kAttnThreads)
    attn_backward_dq(AttnPlan p, AttnInputs<T> in, const device_t<T>* dout, const float* lse, const float* D,
                     device_t<T>* dq) {
  extern __shared__ float attn_smem[];
  const int64_t bh = p.bh_of(blockIdx.y, blockIdx.z);
  if (bh >= p.bh) return;
  const int t = p.tile, E = static_cast<int>(p.E), Ev = static_cast<int>(p.Ev);
  const int ld_qk = p.ld_qk, ld_v = p.ld_v, ld_s = p.ld_s;
  const int64_t qt = p.tile_of(blockIdx.x), i0 = qt * t;
  float *sq = attn_smem + p.smem.q, *sk = attn_smem + p.smem.k, *sv = attn_smem + p.smem.v;
  float *sdo = attn_smem + p.smem.dout, *sdq = attn_smem + p.smem.acc, *sds = attn_smem + p.smem.ds;
  float *slse = attn_smem + p.smem.row0, *sD = attn_smem + p.smem.row1;

  load_rows<T>(sq, ld_qk, in.q + bh * p.L * E, E, i0, p.L, t);
  load_rows<T>(sdo, ld_v, dout + bh * p.L * Ev, Ev, i0, p.L, t);
  load_row_values(slse, lse + bh * p.L, i0, p.L, t, neg_inf());
  load_row_values(sD, D + bh * p.L, i0, p.L, t, 0.f);
  for (int idx = threadIdx.x; idx < t * E; idx += kAttnThreads) sdq[(idx / E) * ld_qk + idx % E] = 0.f;

  const int64_t k_end = p.key_tile_end(qt);
  for (int64_t kt = 0; kt < k_end; ++kt) {
    const int64_t j0 = kt * t;
    load_rows<T>(sk, ld_qk, in.k + bh * p.S * E, E, j0, p.S, t);
    load_rows<T>(sv, ld_v, in.v + bh * p.S * Ev, Ev, j0, p.S, t);
    __syncthreads();

    for (int idx = threadIdx.x; idx < t * t; idx += kAttnThreads) {
      const int r = idx / t, c = idx % t;
      sds[r * ld_s + c] = score_grad<T>(p, in, bh, sq, sdo, sk, sv, slse, sD, r, c, i0 + r, j0 + c, nullptr);
    }
    __syncthreads();

    for (int idx = threadIdx.x; idx < t * E; idx += kAttnThreads) {
      const int r = idx / E, e = idx % E;
      float acc = 0.f;
      for (int c = 0; c < t; ++c) acc = fmaf(sds[r * ld_s + c], sk[c * ld_qk + e], acc);
      sdq[r * ld_qk + e] += acc * in.scale;
    }
    __syncthreads();
  }
  __syncthreads();

  device_t<T>* qrow = dq + (bh * p.L + i0) * E;
  for (int idx = threadIdx.x; idx < t * E; idx += kAttnThreads) {
    const int r = idx / E, e = idx % E;
    if (i0 + r < p.L) qrow[static_cast<int64_t>(r) * E + e] = to_stored<T>(sdq[r * ld_qk + e]);
  }
}

template <class T>
__global__ void __launch_bounds__(kAttnThreads)
    attn_backward_dkv(AttnPlan p, AttnInputs<T> in, const device_t<T>* dout, const float* lse, const float* D,
                      device_t<T>* dk, device_t<T>* dv) {
  extern __shared__ float attn_smem[];
  const int64_t bh = p.bh_of(blockIdx.y, blockIdx.z);
  if (bh >= p.bh) return;
  const int t = p.tile, E = static_cast<int>(p.E), Ev = static_cast<int>(p.Ev);
  const int ld_qk = p.ld_qk, ld_v = p.ld_v, ld_s = p.ld_s;
  const int64_t kt = p.tile_of(blockIdx.x), j0 = kt * t;
  float *sq = attn_smem + p.smem.q, *sk = attn_smem + p.smem.k, *sv = attn_smem + p.smem.v;
  float *sdo = attn_smem + p.smem.dout, *sdk = attn_smem + p.smem.acc, *sdv = attn_smem + p.smem.acc_v;
  float *sp = attn_smem + p.smem.p, *sds = attn_smem + p.smem.ds;
  float *slse = attn_smem + p.smem.row0, *sD = attn_smem + p.smem.row1;

  load_rows<T>(sk, ld_qk, in.k + bh * p.S * E, E, j0, p.S, t);
  load_rows<T>(sv, ld_v, in.v + bh * p.S * Ev, Ev, j0, p.S, t);
  for (int idx = threadIdx.x; idx < t * E; idx += kAttnThreads) sdk[(idx / E) * ld_qk + idx % E] = 0.f;
  for (int idx = threadIdx.x; idx < t * Ev; idx += kAttnThreads) sdv[(idx / Ev) * ld_v + idx % Ev] = 0.f;

  // Keys no query sees (causal, past L) keep zero gradients: the loop is empty for them.
  for (int64_t qt = p.query_tile_begin(kt); qt < p.q_tiles; ++qt) {
    const int64_t i0 = qt * t;
    load_rows<T>(sq, ld_qk, in.q + bh * p.L * E, E, i0, p.L, t);
    load_rows<T>(sdo, ld_v, dout + bh * p.L * Ev, Ev, i0, p.L, t);
    load_row_values(slse, lse + bh * p.L, i0, p.L, t, neg_inf());
    load_row_values(sD, D + bh * p.L, i0, p.L, t, 0.f);
    __syncthreads();

    for (int idx = threadIdx.x; idx < t * t; idx += kAttnThreads) {
      const int r = idx / t, c = idx % t;
      sds[r * ld_s + c] =
          score_grad<T>(p, in, bh, sq, sdo, sk, sv, slse, sD, r, c, i0 + r, j0 + c, sp + r * ld_s + c);
    }
    __syncthreads();

    for (int idx = threadIdx.x; idx < t * Ev; idx += kAttnThreads) {
      const int c = idx / Ev, d = idx % Ev;
      float acc = 0.f;
      for (int r = 0; r < t; ++r) acc = fmaf(sp[r * ld_s + c], sdo[r * ld_v + d], acc);
      sdv[c * ld_v + d] += acc;
    }
    for (int idx = threadIdx.x; idx < t * E; idx += kAttnThreads) {
      const int c = idx / E, e = idx % E;
      float acc = 0.f;
      for (int r = 0; r < t; ++r) acc = fmaf(sds[r * ld_s + c], sq[r * ld_qk + e], acc);
      sdk[c * ld_qk + e] += acc * in.scale;
    }
    __syncthreads();  // before the next query tile overwrites Q, dO, P and dS
  }
  __syncthreads();

  device_t<T>* krow = dk + (bh * p.S + j0) * E;
  device_t<T>* vrow = dv + (bh * p.S + j0) * Ev;
  for (int idx = threadIdx.x; idx < t * E; idx += kAttnThreads) {
    const int c = idx / E, e = idx % E;
    if (j0 + c < p.S) krow[static_cast<int64_t>(c) * E + e] = to_stored<T>(sdk[c * ld_qk + e]);
  }
  for (int idx = threadIdx.x; idx < t * Ev; idx += kAttnThreads) {
    const int c = idx / Ev, d = idx % Ev;
    if (j0 + c < p.S) vrow[static_cast<int64_t>(c) * Ev + d] = to_stored<T>(sdv[c * ld_v + d]);
  }
}

// ---- host side ----------------------------------------------------------------------------------

struct Dims {
  int64_t B, H, L, S, E, Ev;
};

bool has_sizes(const Tensor& t, std::initializer_list<int64_t> sizes) {
  return t.sizes().vec() == std::vector<int64_t>(sizes);
}

void check_dense(const Tensor& t, const Tensor& q, IntArrayRef sizes, const char* what) {
  EMBER_CHECK(t.defined() && t.is_cuda() && t.device() == q.device() && t.is_contiguous() &&
                  t.dtype() == q.dtype() && t.sizes().vec() == sizes.vec(),
              "internal error: cuda::sdpa: ", what,
              " must be a dense CUDA tensor of q's device and dtype, shape ", sizes);
}

/// The sizes of q, k, v after the contract's checks (cuda/attention.h).
Dims check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  EMBER_CHECK(q.defined() && q.dim() == 4 && k.defined() && k.dim() == 4 && v.defined() && v.dim() == 4,
              "internal error: cuda::sdpa needs 4-d q, k, v");
  const Dims d{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
  check_dense(q, q, {d.B, d.H, d.L, d.E}, "q");
  check_dense(k, q, {d.B, d.H, d.S, d.E}, "k");
  check_dense(v, q, {d.B, d.H, d.S, d.Ev}, "v");
  EMBER_CHECK(q.dtype() == kFloat || q.dtype() == kHalf || q.dtype() == kBFloat16,
              "internal error: cuda::sdpa takes float32, float16 or bfloat16, not ", q.dtype());
  if (mask.defined())
    EMBER_CHECK(mask.is_cuda() && mask.device() == q.device() && mask.dtype() == q.dtype() &&
                    has_sizes(mask, {d.B, d.H, d.L, d.S}),
                "internal error: cuda::sdpa: the mask must be a [B, H, L, S] view of q's device and dtype");
  return d;
}

void check_float_rows(const Tensor& t, const Tensor& q, const Dims& d, const char* what) {
  EMBER_CHECK(t.defined() && t.is_cuda() && t.device() == q.device() && t.is_contiguous() &&
                  t.dtype() == kFloat && has_sizes(t, {d.B, d.H, d.L}),
              "internal error: cuda::sdpa: ", what, " must be a dense float32 [B, H, L] CUDA tensor");
}

/// The plan of `kernel` for this call under the current device's opt-in shared-memory limit.
AttnPlan plan_for(AttnKernel kernel, const Dims& d, bool causal) {
  int device = 0, optin = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  AttnPlan p = plan_attention(kernel, d.B * d.H, d.L, d.S, d.E, d.Ev, causal, optin);
  EMBER_CHECK(p.tile > 0, "internal error: cuda::sdpa has no kernel for head sizes ", d.E, " and ", d.Ev,
              " with ", optin, " bytes of shared memory a block, or ", d.B * d.H, " x ", d.L, " x ", d.S,
              " passes the grid limits");
  return p;
}

/// Calls f.template operator()<T>() for the three dtypes the kernels take.
template <class F>
void visit_attn_dtype(ScalarType t, F&& f) {
  switch (t) {
    case kFloat:
      return f.template operator()<float>();
    case kHalf:
      return f.template operator()<Half>();
    case kBFloat16:
      return f.template operator()<BFloat16>();
    default:
      break;
  }
  ::ember::detail::throw_error(::ember::detail::str_cat("internal error: cuda::sdpa has no kernel for ", t));
}

AttnDropoutArgs dropout_args(const AttnDropout& d) {
  if (!d.enabled()) return {};
  return {true, d.seed, d.offset, attn_dropout::keep_threshold(d.p),
          static_cast<float>(attn_dropout::keep_scale(d.p))};
}

template <class T>
AttnInputs<T> inputs_of(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                        const AttnDropout& dropout) {
  AttnInputs<T> in{static_cast<const device_t<T>*>(q.data_ptr()),
                   static_cast<const device_t<T>*>(k.data_ptr()),
                   static_cast<const device_t<T>*>(v.data_ptr()),
                   nullptr,
                   AttnMaskStrides{},
                   static_cast<float>(scale),
                   dropout_args(dropout)};
  if (mask.defined()) {
    in.mask = static_cast<const device_t<T>*>(mask.data_ptr());
    in.ms = AttnMaskStrides{q.size(1), mask.stride(0), mask.stride(1), mask.stride(2), mask.stride(3)};
  }
  return in;
}

/// Launches kernel f with the plan's grid and dynamic shared memory (opting in past 48 KB).
template <class Kernel, class... Args>
void launch(Kernel f, const AttnPlan& p, Args... args) {
  if (p.grid_x == 0 || p.bh == 0) return;
  if (p.smem_bytes > kAttnDefaultSmem)
    EMBER_CUDA_CHECK(
        cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(p.smem_bytes)));
  const dim3 grid(static_cast<unsigned>(p.grid_x), static_cast<unsigned>(p.grid_y),
                  static_cast<unsigned>(p.grid_z));
  f<<<grid, kAttnThreads, static_cast<size_t>(p.smem_bytes), current_raw_stream()>>>(p, args...);
  EMBER_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool sdpa_fused_supported(int64_t head_dim_qk, int64_t head_dim_v, int dtype) {
  const auto t = static_cast<ScalarType>(dtype);
  return (t == kFloat || t == kHalf || t == kBFloat16) && attn_head_dims_supported(head_dim_qk, head_dim_v);
}

void sdpa_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                  double scale, const AttnDropout& dropout, const Tensor& out, const Tensor& logsumexp) {
  const Dims d = check_inputs(q, k, v, mask);
  check_dense(out, q, {d.B, d.H, d.L, d.Ev}, "out");
  check_float_rows(logsumexp, q, d, "logsumexp");
  if (d.B * d.H * d.L == 0) return;  // nothing to write (S == 0 still writes out 0, logsumexp -inf)
  DeviceGuard guard(q.device());
  const AttnPlan p = plan_for(AttnKernel::kForward, d, is_causal);
  visit_attn_dtype(q.dtype(), [&]<typename T>() {
    launch(attn_forward<T>, p, inputs_of<T>(q, k, v, mask, scale, dropout),
           static_cast<device_t<T>*>(out.data_ptr()), logsumexp.data_ptr<float>());
  });
}

void sdpa_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                   const Tensor& mask, bool is_causal, double scale, const AttnDropout& dropout,
                   const Tensor& out, const Tensor& logsumexp, const Tensor& grad_q, const Tensor& grad_k,
                   const Tensor& grad_v) {
  const Dims d = check_inputs(q, k, v, mask);
  check_dense(grad_out, q, {d.B, d.H, d.L, d.Ev}, "grad_out");
  check_dense(out, q, {d.B, d.H, d.L, d.Ev}, "out");
  check_float_rows(logsumexp, q, d, "logsumexp");
  check_dense(grad_q, q, {d.B, d.H, d.L, d.E}, "grad_q");
  check_dense(grad_k, q, {d.B, d.H, d.S, d.E}, "grad_k");
  check_dense(grad_v, q, {d.B, d.H, d.S, d.Ev}, "grad_v");
  // L == 0 still writes zero grad_k and grad_v, S == 0 a zero grad_q (the kernels' loops are
  // empty then); only an empty batch or head count leaves nothing to write.
  if (d.B * d.H == 0 || (d.L == 0 && d.S == 0)) return;
  DeviceGuard guard(q.device());
  const AttnPlan pdq = plan_for(AttnKernel::kBackwardDq, d, is_causal);
  const AttnPlan pdkv = plan_for(AttnKernel::kBackwardDkv, d, is_causal);
  const int64_t rows = d.B * d.H * d.L;
  Tensor D = empty({std::max<int64_t>(rows, 1)}, TensorOptions().dtype(kFloat).device(q.device()));
  visit_attn_dtype(q.dtype(), [&]<typename T>() {
    const auto* dout = static_cast<const device_t<T>*>(grad_out.data_ptr());
    const AttnInputs<T> in = inputs_of<T>(q, k, v, mask, scale, dropout);
    if (rows > 0) {
      const int64_t blocks = std::min<int64_t>((rows + kWarps - 1) / kWarps, int64_t{1} << 20);
      attn_backward_rowdot<T><<<static_cast<unsigned>(blocks), kAttnThreads, 0, current_raw_stream()>>>(
          rows, static_cast<int>(d.Ev), dout, static_cast<const device_t<T>*>(out.data_ptr()),
          D.data_ptr<float>());
      EMBER_CUDA_CHECK_LAUNCH();
    }
    const float* lse = logsumexp.data_ptr<float>();
    launch(attn_backward_dq<T>, pdq, in, dout, lse, static_cast<const float*>(D.data_ptr<float>()),
           static_cast<device_t<T>*>(grad_q.data_ptr()));
    launch(attn_backward_dkv<T>, pdkv, in, dout, lse, static_cast<const float*>(D.data_ptr<float>()),
           static_cast<device_t<T>*>(grad_k.data_ptr()), static_cast<device_t<T>*>(grad_v.data_ptr()));
  });
}

}  // namespace ember::cuda
