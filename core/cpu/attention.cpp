// Fused scaled-dot-product attention on the CPU (flash-attention style; contract in
// core/cpu/attention.h). Forward: for each (batch, head) and tile of kBlockQ queries, walk the
// keys in tiles of kBlockK keeping each row's running max m and sum l of exp(score - m), and
// rescale the output accumulator whenever m grows; the [L, S] matrix never exists, only one
// kBlockQ x kBlockK tile per thread. Backward: per (batch, head), recompute each tile's
// probabilities from the saved logsumexp, P = exp(score - lse), and
//   dV += P^T dO,  dP = dO V^T,  dS = P o (dP - rowsum(dO o O)),
//   dQ += scale dS K,  dK += scale dS^T Q.
// With dropout (flash attention's): the forward multiplies the probabilities by the mask Z
// (0, or 1 / (1 - p) where kept) after they entered the row's sum l, so the softmax is
// normalised over every key; the backward regenerates Z from the node's (seed, offset) and
// uses P o Z where the forward used it:
//   dV += (P o Z)^T dO,  dS = P o (dP o Z - rowsum(dO o O)),
// the row sum unchanged since rowsum(dP o Z o P) = dO . O for the dropped output O.
// The tile products go through the CPU GEMM; everything accumulates in float (double for
// double inputs).
#include "ember/core/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__AVX2__) && defined(__BMI2__)
#include <immintrin.h>
#endif

#include "ember/core/cpu/gemm.h"
#include "ember/core/cpu/philox_avx2.h"
#include "ember/core/cpu/vec_math.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {
namespace {

constexpr int64_t kBlockQ = 64;
constexpr int64_t kBlockK = 64;

template <class M>
constexpr M kNegInf = -std::numeric_limits<M>::infinity();

/// Sizes shared by forward and backward.
struct Dims {
  int64_t B, H, L, S, E, Ev;
  int64_t heads() const { return B * H; }
};

Dims dims_of(const Tensor& q, const Tensor& v) {
  return {q.size(0), q.size(1), q.size(2), v.size(2), q.size(3), v.size(3)};
}

/// The additive mask of one (batch, head) read through its strides; `data` is null when the
/// call has no mask.
template <class T>
struct MaskHead {
  const T* data = nullptr;
  int64_t row_stride = 0, col_stride = 0;
};

template <class T>
MaskHead<T> mask_head(const Tensor& mask, const Dims& d, int64_t bh) {
  if (!mask.defined()) return {};
  const int64_t b = bh / d.H, h = bh % d.H;
  const T* base = mask.data_ptr<T>() + b * mask.stride(0) + h * mask.stride(1);
  return {base, mask.stride(2), mask.stride(3)};
}

/// n values of src in the compute type M: src itself when T is M, else a copy into buf.
template <class T, class M>
const M* as_compute(const T* src, int64_t n, std::vector<M>& buf) {
  if constexpr (std::is_same_v<T, M>) {
    (void)n, (void)buf;
    return src;
  } else {
    buf.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = static_cast<M>(src[i]);
    return buf.data();
  }
}

/// x[c] = exp(x[c] - sub) for c < n; the float form runs 8 lanes at a time (vec_math's exp,
/// a few ulp), the tail through a padded copy; exp(-inf) = 0 either way.
template <class M>
void exp_shifted(M* x, int64_t n, M sub) {
  if constexpr (std::is_same_v<M, float>) {
    int64_t c = 0;
    for (; c + vec::kWidth <= n; c += vec::kWidth) vec::store(x + c, vec::exp(vec::load(x + c) - sub));
    if (c < n) {
      float tail[vec::kWidth] = {};
      std::copy(x + c, x + n, tail);
      vec::f8 r = vec::exp(vec::load(tail) - sub);
      float out[vec::kWidth];
      vec::store(out, r);
      std::copy(out, out + (n - c), x + c);
    }
  } else {
    for (int64_t c = 0; c < n; ++c) x[c] = std::exp(x[c] - sub);
  }
}

/// Adds the mask and the causal -inf to one row of scores for query i and keys j0..j0+n-1.
template <class T, class M>
void mask_row(M* row, int64_t n, int64_t i, int64_t j0, const MaskHead<T>& mask, bool is_causal) {
  if (mask.data) {
    const T* mr = mask.data + i * mask.row_stride + j0 * mask.col_stride;
    for (int64_t c = 0; c < n; ++c) row[c] += static_cast<M>(mr[c * mask.col_stride]);
  }
  if (is_causal)
    for (int64_t c = std::max<int64_t>(0, i - j0 + 1); c < n; ++c) row[c] = kNegInf<M>;
}

/// Tasks per parallel chunk so one chunk is worth about a million multiply-adds: a small
/// call stays on one thread (a parallel region costs more than it saves there).
int64_t grain_for(int64_t task_madds) {
  constexpr int64_t kChunkMadds = int64_t{1} << 20;
  return std::max<int64_t>(1, kChunkMadds / std::max<int64_t>(1, task_madds));
}

/// Whether a causal call can stop before key tile j0 for queries up to i_last.
inline bool causal_done(bool is_causal, int64_t j0, int64_t i_last) { return is_causal && j0 > i_last; }

// ---- dropout ------------------------------------------------------------------------------------

/// One call's dropout in the compute type (core/attention_dropout.h): the keep threshold and
/// the kept elements' factor 1 / (1 - p), which is 1 without dropout.
template <class M>
struct Dropout {
  bool on = false;
  uint64_t seed = 0, offset = 0, threshold = 0;
  M scale = 1;
};

template <class M>
Dropout<M> dropout_of(const AttnDropout& d) {
  if (!d.enabled()) return {};
  return {true, d.seed, d.offset, attn_dropout::keep_threshold(d.p),
          static_cast<M>(attn_dropout::keep_scale(d.p))};
}

/// The linear index of attention element (bh, i, j) in [B, H, L, S], which names its decision.
inline uint64_t element_index(const Dims& d, int64_t bh, int64_t i, int64_t j) {
  return static_cast<uint64_t>((bh * d.L + i) * d.S + j);
}

/// The decisions of the 32 elements of blocks group .. group + 7 (bit 4 b + w: word w of block
/// b): attn_dropout::kept4 of the eight blocks, with AVX2 eight Philox blocks at a time (the
/// rounds of philox::philox4x32_10 on eight lanes; the tests hold the result to the scalar
/// function's bit for bit). Falls back to kept4 where the eight counters' low words would wrap.
template <class M>
uint32_t kept32(const Dropout<M>& dr, uint64_t group) {
  const uint64_t counter = dr.offset + group;
#if defined(__AVX2__) && defined(__BMI2__)
  if (static_cast<uint32_t>(counter) <= 0xFFFFFFFFu - 7 && dr.threshold <= 0xFFFFFFFFu) {
    __m256i c[4];
    cpu::philox8_avx2(dr.seed, counter, c);
    // Unsigned word < threshold by flipping the sign bits of both sides.
    const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
    const __m256i th = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(dr.threshold) ^ 0x80000000u));
    auto below = [&](__m256i w) {
      const __m256i lt = _mm256_cmpgt_epi32(th, _mm256_xor_si256(w, sign));
      return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(lt)));  // bit b: block b
    };
    return _pdep_u32(below(c[0]), 0x11111111u) | _pdep_u32(below(c[1]), 0x22222222u) |
           _pdep_u32(below(c[2]), 0x44444444u) | _pdep_u32(below(c[3]), 0x88888888u);
  }
#endif
  uint32_t bits = 0;
  for (uint64_t b = 0; b < 8; ++b)
    bits |= attn_dropout::kept4(dr.seed, dr.offset, group + b, dr.threshold) << (4 * b);
  return bits;
}

/// z[c] = the factor of element index0 + c for c < n: dr.scale where attn_dropout::kept
/// keeps it, else 0. One Philox block serves its four consecutive elements, and eight blocks
/// are drawn at once where at least 16 elements remain; the factors are written without a
/// branch, so the loops that use them vectorize.
template <class M>
void dropout_factors(const Dropout<M>& dr, uint64_t index0, int64_t n, M* z) {
  int64_t c = 0;
  for (uint64_t idx = index0; c < n;) {
    const uint64_t group = idx / 4;
    const bool wide = n - c >= 16;
    const uint32_t bits =
        wide ? kept32(dr, group) : attn_dropout::kept4(dr.seed, dr.offset, group, dr.threshold);
    const auto first = static_cast<int64_t>(idx - 4 * group);
    const int64_t m = std::min<int64_t>((wide ? 32 : 4) - first, n - c);
    for (int64_t b = 0; b < m; ++b) z[c + b] = dr.scale * static_cast<M>((bits >> (first + b)) & 1u);
    c += m;
    idx += static_cast<uint64_t>(m);
  }
}

// ---- forward ----------------------------------------------------------------------------------

/// Running state of one query tile: scores of the current key tile, output accumulator,
/// row max and row sum.
template <class M>
struct TileState {
  std::vector<M> scores, acc, m, l, z;  // z: one row's dropout factors
  void reset(int64_t bq, int64_t ev) {
    scores.assign(static_cast<size_t>(bq * kBlockK), M(0));
    z.resize(static_cast<size_t>(kBlockK));
    acc.assign(static_cast<size_t>(bq * ev), M(0));
    m.assign(static_cast<size_t>(bq), kNegInf<M>);
    l.assign(static_cast<size_t>(bq), M(0));
  }
};

/// Online-softmax update of row r with its new scores (turned into exp(score - m_new) in place).
template <class M>
void online_update(TileState<M>& st, int64_t r, int64_t bk, int64_t ev) {
  M* row = st.scores.data() + r * bk;
  M mx = kNegInf<M>;
  for (int64_t c = 0; c < bk; ++c) mx = std::max(mx, row[c]);
  const M m_new = std::max(st.m[r], mx);
  if (m_new == kNegInf<M>) {  // no visible key yet: contributes nothing
    std::fill(row, row + bk, M(0));
    return;
  }
  const M alpha = std::exp(st.m[r] - m_new);  // 0 when m was -inf
  exp_shifted(row, bk, m_new);
  M sum = 0;
  for (int64_t c = 0; c < bk; ++c) sum += row[c];
  st.l[r] = st.l[r] * alpha + sum;
  if (alpha != M(1)) {
    M* acc = st.acc.data() + r * ev;
    for (int64_t c = 0; c < ev; ++c) acc[c] *= alpha;
  }
  st.m[r] = m_new;
}

/// One (batch, head) x query tile [i0, i0 + bq): out rows and their logsumexp.
template <class T, class M, class LseT>
void forward_tile(const M* Q, const M* K, const M* V, const MaskHead<T>& mask, const Dims& d, bool is_causal,
                  M scale, const Dropout<M>& dr, int64_t bh, int64_t i0, int64_t bq, TileState<M>& st, T* out,
                  LseT* lse) {
  st.reset(bq, d.Ev);
  for (int64_t j0 = 0; j0 < d.S && !causal_done(is_causal, j0, i0 + bq - 1); j0 += kBlockK) {
    const int64_t bk = std::min(kBlockK, d.S - j0);
    M* s = st.scores.data();
    gemm<M>(false, true, bq, bk, d.E, scale, Q, d.E, K + j0 * d.E, d.E, M(0), s, bk);
    for (int64_t r = 0; r < bq; ++r) {
      M* row = s + r * bk;
      mask_row(row, bk, i0 + r, j0, mask, is_causal);
      online_update(st, r, bk, d.Ev);  // l sums the undropped probabilities
      if (dr.on) {
        M* z = st.z.data();
        dropout_factors(dr, element_index(d, bh, i0 + r, j0), bk, z);
        for (int64_t c = 0; c < bk; ++c) row[c] *= z[c];
      }
    }
    gemm<M>(false, false, bq, d.Ev, bk, M(1), s, bk, V + j0 * d.Ev, d.Ev, M(1), st.acc.data(), d.Ev);
  }
  for (int64_t r = 0; r < bq; ++r) {
    const M l = st.l[r];
    const M inv = l > M(0) ? M(1) / l : M(0);  // a row that saw no key is 0
    for (int64_t c = 0; c < d.Ev; ++c) out[r * d.Ev + c] = static_cast<T>(st.acc[r * d.Ev + c] * inv);
    lse[r] = static_cast<LseT>(l > M(0) ? st.m[r] + std::log(l) : kNegInf<M>);
  }
}

template <class T, class LseT>
void forward_impl(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                  double scale, const AttnDropout& dropout, Tensor& out, Tensor& logsumexp) {
  using M = opmath_t<T>;
  const Dims d = dims_of(q, v);
  const Dropout<M> dr = dropout_of<M>(dropout);
  const int64_t tiles = (d.L + kBlockQ - 1) / kBlockQ;
  const T *qp = q.data_ptr<T>(), *kp = k.data_ptr<T>(), *vp = v.data_ptr<T>();
  T* op = out.data_ptr<T>();
  LseT* lp = logsumexp.data_ptr<LseT>();
  // One task per (batch, head, query tile); a chunk of tasks converts each head's K and V once.
  const int64_t task_madds = std::min(kBlockQ, d.L) * d.S * (d.E + d.Ev);
  parallel_for(d.heads() * tiles, grain_for(task_madds), [&](int64_t begin, int64_t end) {
    std::vector<M> qbuf, kbuf, vbuf;
    TileState<M> st;
    int64_t loaded = -1;
    const M *K = nullptr, *V = nullptr;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t bh = t / tiles, i0 = (t % tiles) * kBlockQ, bq = std::min(kBlockQ, d.L - i0);
      if (bh != loaded) {
        K = as_compute<T, M>(kp + bh * d.S * d.E, d.S * d.E, kbuf);
        V = as_compute<T, M>(vp + bh * d.S * d.Ev, d.S * d.Ev, vbuf);
        loaded = bh;
      }
      const M* Q = as_compute<T, M>(qp + (bh * d.L + i0) * d.E, bq * d.E, qbuf);
      forward_tile<T, M, LseT>(Q, K, V, mask_head<T>(mask, d, bh), d, is_causal, static_cast<M>(scale), dr,
                               bh, i0, bq, st, op + (bh * d.L + i0) * d.Ev, lp + bh * d.L + i0);
    }
  });
}

// ---- backward ---------------------------------------------------------------------------------

/// One (batch, head) in the compute type, with its gradient accumulators.
template <class M>
struct HeadBuffers {
  std::vector<M> q, k, v, dout, out, dq, dk, dv, delta, p, dp, z;  // z: one row's dropout factors
  const M *Q, *K, *V, *dO, *O;
};

/// P = exp(scale * Q_i K_j^T + mask - lse) for one tile (0 where lse is -inf).
template <class T, class M, class LseT>
void tile_probabilities(const HeadBuffers<M>& hb, M* p, const MaskHead<T>& mask, const Dims& d,
                        bool is_causal, M scale, const LseT* lse, int64_t i0, int64_t bq, int64_t j0,
                        int64_t bk) {
  gemm<M>(false, true, bq, bk, d.E, scale, hb.Q + i0 * d.E, d.E, hb.K + j0 * d.E, d.E, M(0), p, bk);
  for (int64_t r = 0; r < bq; ++r) {
    M* row = p + r * bk;
    const M l = static_cast<M>(lse[i0 + r]);
    if (l == kNegInf<M>) {
      std::fill(row, row + bk, M(0));
      continue;
    }
    mask_row(row, bk, i0 + r, j0, mask, is_causal);
    exp_shifted(row, bk, l);
  }
}

/// dS = P o (dP - delta) of one tile row; with dropout dS = P o (dP o Z - delta) and P
/// becomes P o Z for dV.
template <class M>
void score_grad_row(M* p, M* dp, int64_t bk, M delta, const Dropout<M>& dr, uint64_t index0, M* z) {
  if (!dr.on) {
    for (int64_t c = 0; c < bk; ++c) dp[c] = p[c] * (dp[c] - delta);
    return;
  }
  dropout_factors(dr, index0, bk, z);
  for (int64_t c = 0; c < bk; ++c) {
    dp[c] = p[c] * (dp[c] * z[c] - delta);
    p[c] *= z[c];
  }
}

/// The gradient contributions of one (query tile, key tile) pair.
template <class T, class M, class LseT>
void backward_tile(HeadBuffers<M>& hb, const MaskHead<T>& mask, const Dims& d, bool is_causal, M scale,
                   const Dropout<M>& dr, int64_t bh, const LseT* lse, int64_t i0, int64_t bq, int64_t j0,
                   int64_t bk) {
  M *p = hb.p.data(), *dp = hb.dp.data();
  tile_probabilities(hb, p, mask, d, is_causal, scale, lse, i0, bq, j0, bk);
  const M* dO = hb.dO + i0 * d.Ev;
  gemm<M>(false, true, bq, bk, d.Ev, M(1), dO, d.Ev, hb.V + j0 * d.Ev, d.Ev, M(0), dp, bk);
  for (int64_t r = 0; r < bq; ++r)
    score_grad_row(p + r * bk, dp + r * bk, bk, hb.delta[i0 + r], dr, element_index(d, bh, i0 + r, j0),
                   hb.z.data());
  gemm<M>(true, false, bk, d.Ev, bq, M(1), p, bk, dO, d.Ev, M(1), hb.dv.data() + j0 * d.Ev, d.Ev);
  gemm<M>(false, false, bq, d.E, bk, scale, dp, bk, hb.K + j0 * d.E, d.E, M(1), hb.dq.data() + i0 * d.E, d.E);
  gemm<M>(true, false, bk, d.E, bq, scale, dp, bk, hb.Q + i0 * d.E, d.E, M(1), hb.dk.data() + j0 * d.E, d.E);
}

template <class T, class M>
void store(const std::vector<M>& src, T* dst) {
  for (size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<T>(src[i]);
}

template <class T, class LseT>
void backward_impl(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                   const Tensor& mask, bool is_causal, double scale, const AttnDropout& dropout,
                   const Tensor& out, const Tensor& logsumexp, Tensor& grad_q, Tensor& grad_k,
                   Tensor& grad_v) {
  using M = opmath_t<T>;
  const Dims d = dims_of(q, v);
  const Dropout<M> dr = dropout_of<M>(dropout);
  const M sc = static_cast<M>(scale);
  parallel_for(d.heads(), grain_for(d.L * d.S * 2 * (d.E + d.Ev)), [&](int64_t begin, int64_t end) {
    HeadBuffers<M> hb;
    hb.p.resize(static_cast<size_t>(kBlockQ * kBlockK));
    hb.dp.resize(hb.p.size());
    hb.z.resize(static_cast<size_t>(kBlockK));
    for (int64_t bh = begin; bh < end; ++bh) {
      hb.Q = as_compute<T, M>(q.data_ptr<T>() + bh * d.L * d.E, d.L * d.E, hb.q);
      hb.K = as_compute<T, M>(k.data_ptr<T>() + bh * d.S * d.E, d.S * d.E, hb.k);
      hb.V = as_compute<T, M>(v.data_ptr<T>() + bh * d.S * d.Ev, d.S * d.Ev, hb.v);
      hb.dO = as_compute<T, M>(grad_out.data_ptr<T>() + bh * d.L * d.Ev, d.L * d.Ev, hb.dout);
      hb.O = as_compute<T, M>(out.data_ptr<T>() + bh * d.L * d.Ev, d.L * d.Ev, hb.out);
      hb.dq.assign(static_cast<size_t>(d.L * d.E), M(0));
      hb.dk.assign(static_cast<size_t>(d.S * d.E), M(0));
      hb.dv.assign(static_cast<size_t>(d.S * d.Ev), M(0));
      hb.delta.assign(static_cast<size_t>(d.L), M(0));
      for (int64_t i = 0; i < d.L; ++i)
        for (int64_t c = 0; c < d.Ev; ++c) hb.delta[i] += hb.dO[i * d.Ev + c] * hb.O[i * d.Ev + c];
      const MaskHead<T> mh = mask_head<T>(mask, d, bh);
      const LseT* lse = logsumexp.data_ptr<LseT>() + bh * d.L;
      for (int64_t i0 = 0; i0 < d.L; i0 += kBlockQ) {
        const int64_t bq = std::min(kBlockQ, d.L - i0);
        for (int64_t j0 = 0; j0 < d.S && !causal_done(is_causal, j0, i0 + bq - 1); j0 += kBlockK)
          backward_tile(hb, mh, d, is_causal, sc, dr, bh, lse, i0, bq, j0, std::min(kBlockK, d.S - j0));
      }
      store(hb.dq, grad_q.data_ptr<T>() + bh * d.L * d.E);
      store(hb.dk, grad_k.data_ptr<T>() + bh * d.S * d.E);
      store(hb.dv, grad_v.data_ptr<T>() + bh * d.S * d.Ev);
    }
  });
}

}  // namespace

void sdpa_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                  double scale, const AttnDropout& dropout, Tensor& out, Tensor& logsumexp) {
  visit_float_dtype(q.dtype(), "_scaled_dot_product_flash_attention_for_cpu", [&]<typename T>() {
    if constexpr (std::is_same_v<T, double>)
      forward_impl<T, double>(q, k, v, mask, is_causal, scale, dropout, out, logsumexp);
    else
      forward_impl<T, float>(q, k, v, mask, is_causal, scale, dropout, out, logsumexp);
  });
}

void sdpa_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                   const Tensor& mask, bool is_causal, double scale, const AttnDropout& dropout,
                   const Tensor& out, const Tensor& logsumexp, Tensor& grad_q, Tensor& grad_k,
                   Tensor& grad_v) {
  visit_float_dtype(q.dtype(), "_scaled_dot_product_flash_attention_for_cpu_backward", [&]<typename T>() {
    if constexpr (std::is_same_v<T, double>)
      backward_impl<T, double>(grad_out, q, k, v, mask, is_causal, scale, dropout, out, logsumexp, grad_q,
                               grad_k, grad_v);
    else
      backward_impl<T, float>(grad_out, q, k, v, mask, is_causal, scale, dropout, out, logsumexp, grad_q,
                              grad_k, grad_v);
  });
}

}  // namespace ember::cpu
