// How the fused scaled-dot-product attention kernels (cuda/attention.cu) lay their work over
// blocks and shared memory: plain C++ (no CUDA header), so the tile choice, the grid, the
// shared-memory layout and the causal tile ranges are unit-tested on the CPU
// (tests/core/test_cuda_attention_plan.cpp); the kernels call the same map functions.
//
// q [BH, L, E], k [BH, S, E], v [BH, S, Ev] (BH = batch x heads). Three kernels, all square
// tiles of `tile` query rows by `tile` keys and kAttnThreads threads a block:
//   forward   a block per (bh, query tile): loops over the key tiles the query tile can see,
//             online softmax, writes out and logsumexp.
//   dq        a block per (bh, query tile): the same loop, accumulating grad_q.
//   dkv       a block per (bh, key tile): loops over the query tiles that can see it,
//             accumulating grad_k and grad_v.
// (A preprocessing kernel D = rowsum(grad_out * out), one warp per row, needs no plan.)
// The backward is two kernels instead of one dkv kernel that adds its grad_q parts into a
// float scratch with atomicAdd: each output element is then summed by one thread in a fixed
// order, so results are bitwise reproducible (PyTorch's use_deterministic_algorithms), at the
// price of computing the scores Q K^T twice.
//
// Shared memory holds every tile as float (converted on load, so one layout serves every
// dtype); rows of the [rows][E] / [rows][Ev] / [rows][tile] tiles are padded by one float so
// that threads of a warp reading down a column hit different banks. The tile is the largest of
// kAttnTileCandidates whose layout fits half the device's opt-in limit (two blocks per SM),
// else the largest that fits the limit; a head size for which none fits is not supported.
//
// The grid: x = tiles (query tiles, or key tiles for dkv; the heaviest causal tiles first),
// y and z fold bh (gridDim.y, gridDim.z <= 65535): bh = z * grid_y + y, blocks past BH return.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "ember/core/host_device.h"

namespace ember::cuda {

constexpr int kAttnThreads = 256;                                 // threads of every kernel's block
constexpr int64_t kAttnMaxHeadDim = 256;                          // E and Ev of the fused kernels
constexpr int64_t kAttnSm90SmemOptin = 227 * 1024;                // bytes a block may opt in to on sm_90
constexpr int64_t kAttnDefaultSmem = 48 * 1024;                   // bytes a block gets without opting in
constexpr std::array<int, 3> kAttnTileCandidates = {64, 32, 16};  // largest first
constexpr int64_t kAttnMaxGridYZ = 65535;
constexpr int64_t kAttnMaxGridX = 2147483647;  // 2^31 - 1

enum class AttnKernel { kForward, kBackwardDq, kBackwardDkv };

/// Offsets (in floats) of the tiles a kernel keeps in dynamic shared memory; -1 when the
/// kernel has no such tile. Row strides: ld_qk = E + 1, ld_v = Ev + 1, ld_s = tile + 1.
struct AttnSmemLayout {
  int64_t q = -1;      // [tile][ld_qk]  query rows
  int64_t k = -1;      // [tile][ld_qk]  key rows
  int64_t v = -1;      // [tile][ld_v]   value rows
  int64_t dout = -1;   // [tile][ld_v]   grad_out rows (backward)
  int64_t acc = -1;    // forward: out [tile][ld_v]; dq: grad_q [tile][ld_qk]; dkv: grad_k [tile][ld_qk]
  int64_t acc_v = -1;  // dkv: grad_v [tile][ld_v]
  int64_t p = -1;      // [tile][ld_s]   probabilities (forward, dkv)
  int64_t ds = -1;     // [tile][ld_s]   score gradients (backward)
  int64_t row0 = -1;   // [tile]  forward: running max m;   backward: logsumexp
  int64_t row1 = -1;   // [tile]  forward: running sum l;   backward: D = rowsum(grad_out * out)
  int64_t row2 = -1;   // [tile]  forward: the rescale factor exp(m_old - m_new)
  int64_t floats = 0;  // total
};

struct AttnPlan {
  AttnKernel kernel = AttnKernel::kForward;
  int64_t bh = 0, L = 0, S = 0, E = 0, Ev = 0;
  bool causal = false;
  int tile = 0;  // query rows and keys of a tile
  int ld_qk = 0, ld_v = 0, ld_s = 0;
  int64_t q_tiles = 0, k_tiles = 0;
  int64_t tiles = 0;  // blocks along x: q_tiles (forward, dq) or k_tiles (dkv)
  int64_t grid_x = 0, grid_y = 0, grid_z = 0;
  AttnSmemLayout smem;
  int64_t smem_bytes = 0;

  // ---- the maps the kernels use ----
  /// The (batch x head) slice of block (y, z); >= bh for the padding blocks of the fold.
  EMBER_HOST_DEVICE int64_t bh_of(int64_t by, int64_t bz) const { return bz * grid_y + by; }
  /// The tile of block x: the last tiles first, since under causal they have the most work.
  EMBER_HOST_DEVICE int64_t tile_of(int64_t bx) const { return tiles - 1 - bx; }
  /// Forward and dq: key tiles [0, n) that query tile qt loops over. Causal: key j is seen by
  /// query i when j <= i, so the last key the tile's last row (qt + 1) * tile - 1 sees.
  EMBER_HOST_DEVICE int64_t key_tile_end(int64_t qt) const {
    if (!causal) return k_tiles;
    const int64_t last_row = std::min((qt + 1) * tile, L) - 1;  // rows past L see nothing
    return std::min(k_tiles, last_row / tile + 1);
  }
  /// dkv: query tiles [first, q_tiles) that key tile kt loops over. Causal: the first tile
  /// with a row i >= kt * tile (the tile's first key), which for square tiles is tile kt
  /// (none when that is past L: those keys are seen by no query).
  EMBER_HOST_DEVICE int64_t query_tile_begin(int64_t kt) const {
    if (!causal) return 0;
    return std::min(q_tiles, kt);
  }
  /// Whether key j takes part in query i's softmax before the mask (which may add -inf).
  EMBER_HOST_DEVICE bool visible(int64_t i, int64_t j) const { return i < L && j < S && (!causal || j <= i); }
};

/// The additive mask's element of (bh, i, j), read through the strides of its [B, H, L, S]
/// view (0 on broadcast dims); bh = b * heads + h.
struct AttnMaskStrides {
  int64_t heads = 1;
  int64_t b = 0, h = 0, i = 0, j = 0;  // element strides
  EMBER_HOST_DEVICE int64_t offset(int64_t bh, int64_t qi, int64_t kj) const {
    return (bh / heads) * b + (bh % heads) * h + qi * i + kj * j;
  }
};

namespace attn_plan_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The shared-memory layout of `kernel` for square tiles of t.
inline AttnSmemLayout layout(AttnKernel kernel, int t, int64_t E, int64_t Ev) {
  const int64_t qk = t * (E + 1), vv = t * (Ev + 1), ss = int64_t{t} * (t + 1);
  AttnSmemLayout s;
  int64_t at = 0;
  auto take = [&](int64_t n) {
    int64_t o = at;
    at += n;
    return o;
  };
  switch (kernel) {
    case AttnKernel::kForward:
      s.q = take(qk), s.k = take(qk), s.v = take(vv), s.acc = take(vv), s.p = take(ss);
      s.row0 = take(t), s.row1 = take(t), s.row2 = take(t);
      break;
    case AttnKernel::kBackwardDq:
      s.q = take(qk), s.k = take(qk), s.v = take(vv), s.dout = take(vv), s.acc = take(qk), s.ds = take(ss);
      s.row0 = take(t), s.row1 = take(t);
      break;
    case AttnKernel::kBackwardDkv:
      s.q = take(qk), s.k = take(qk), s.v = take(vv), s.dout = take(vv), s.acc = take(qk), s.acc_v = take(vv);
      s.p = take(ss), s.ds = take(ss), s.row0 = take(t), s.row1 = take(t);
      break;
  }
  s.floats = at;
  return s;
}

inline int64_t bytes_of(const AttnSmemLayout& s) { return s.floats * static_cast<int64_t>(sizeof(float)); }

}  // namespace attn_plan_detail

/// The tile of `kernel` for head sizes E, Ev under a per-block shared-memory limit of
/// `smem_limit` bytes; 0 when none fits.
inline int attn_tile(AttnKernel kernel, int64_t E, int64_t Ev, int64_t smem_limit) {
  using namespace attn_plan_detail;
  for (int t : kAttnTileCandidates)
    if (bytes_of(layout(kernel, t, E, Ev)) <= smem_limit / 2) return t;
  for (int t : kAttnTileCandidates)
    if (bytes_of(layout(kernel, t, E, Ev)) <= smem_limit) return t;
  return 0;
}

/// Whether the fused kernels take head sizes E, Ev (every kernel has a tile within the limit).
inline bool attn_head_dims_supported(int64_t E, int64_t Ev, int64_t smem_limit = kAttnSm90SmemOptin) {
  if (E < 1 || Ev < 1 || E > kAttnMaxHeadDim || Ev > kAttnMaxHeadDim) return false;
  for (AttnKernel k : {AttnKernel::kForward, AttnKernel::kBackwardDq, AttnKernel::kBackwardDkv})
    if (attn_tile(k, E, Ev, smem_limit) == 0) return false;
  return true;
}

/// The plan of `kernel` for bh slices of L queries and S keys with head sizes E, Ev; tile 0
/// when the head sizes are not supported or the grid would pass the hardware limits (the
/// caller raises). bh, L and S may be 0 (then the caller launches nothing).
inline AttnPlan plan_attention(AttnKernel kernel, int64_t bh, int64_t L, int64_t S, int64_t E, int64_t Ev,
                               bool causal, int64_t smem_limit = kAttnSm90SmemOptin) {
  using namespace attn_plan_detail;
  AttnPlan p;
  p.kernel = kernel;
  p.bh = bh, p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.causal = causal;
  if (!attn_head_dims_supported(E, Ev, smem_limit)) return p;
  p.tile = attn_tile(kernel, E, Ev, smem_limit);
  p.ld_qk = static_cast<int>(E + 1), p.ld_v = static_cast<int>(Ev + 1), p.ld_s = p.tile + 1;
  p.q_tiles = ceil_div(L, p.tile);
  p.k_tiles = ceil_div(S, p.tile);
  p.tiles = kernel == AttnKernel::kBackwardDkv ? p.k_tiles : p.q_tiles;
  p.smem = layout(kernel, p.tile, E, Ev);
  p.smem_bytes = bytes_of(p.smem);
  p.grid_x = p.tiles;
  p.grid_y = std::min(std::max<int64_t>(bh, 1), kAttnMaxGridYZ);
  p.grid_z = ceil_div(std::max<int64_t>(bh, 1), p.grid_y);
  if (p.grid_x > kAttnMaxGridX || p.grid_z > kAttnMaxGridYZ) p.tile = 0;
  return p;
}

}  // namespace ember::cuda
