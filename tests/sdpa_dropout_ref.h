// The oracle of the fused attention kernels' dropout (tests/core/test_sdpa_dropout.cpp,
// tests/cuda/test_attention.cpp): the keep mask rebuilt from a call's Philox (seed, offset) by
// a plain loop over attn_dropout::kept, one element at a time in [N..., L, S] order, and the
// plain composition softmax(q k^T * scale + mask) o Z @ v with that mask multiplied in as
// Z = keep / (1 - p), built from public ops so autograd gives its input gradients.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/core/attention_dropout.h"
#include "ember/core/generator.h"
#include "ember/ember.h"

namespace ember::test {

/// A call's Philox state: what the generator of `device` will hand the next draw.
struct PhiloxState {
  uint64_t seed = 0, offset = 0;
};

inline PhiloxState next_philox(Device device) {
  Generator& g = default_generator(device);
  return {g.current_seed(), g.offset()};
}

/// 1 where the fused kernels keep attention element n of a `shape` matrix, 0 where they drop
/// it (float64, on the CPU).
inline Tensor reference_keep_mask(IntArrayRef shape, PhiloxState st, double p) {
  Tensor keep = empty(shape, kDouble);
  double* out = keep.data_ptr<double>();
  const uint64_t threshold = attn_dropout::keep_threshold(p);
  for (int64_t n = 0; n < keep.numel(); ++n)
    out[n] = attn_dropout::kept(st.seed, st.offset, static_cast<uint64_t>(n), threshold) ? 1.0 : 0.0;
  return keep;
}

/// k or v with its heads (dim -3) repeated to q_heads, each serving a group of query heads.
inline Tensor repeat_kv_heads(const Tensor& t, int64_t q_heads) {
  if (t.dim() < 3 || t.size(-3) == q_heads) return t;
  DimVector grouped(t.sizes());
  grouped.insert(grouped.size() - 2, q_heads / t.size(-3));
  DimVector merged(t.sizes());
  merged[merged.size() - 3] = q_heads;
  return t.unsqueeze(-3).expand(grouped).reshape(merged);
}

/// The plain composition with the fused call's dropout mask multiplied in (rows that see no
/// key are not supported: the test inputs have none). `mask`: undefined, bool (true = take
/// part) or additive; gqa: k and v have fewer heads than q (enable_gqa).
inline Tensor sdpa_dropout_reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                     bool causal, double scale, double p, PhiloxState st, bool gqa = false) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t L = q.size(-2), S = k.size(-2);
  Tensor kk = gqa ? repeat_kv_heads(k, q.size(-3)) : k;
  Tensor vv = gqa ? repeat_kv_heads(v, q.size(-3)) : v;
  Tensor scores = q.matmul(kk.transpose(-2, -1)) * scale;
  if (causal)
    scores = scores.masked_fill(ones({L, S}, TensorOptions().dtype(kBool)).tril().logical_not(), -inf);
  if (mask.defined())
    scores = mask.dtype() == kBool ? scores.masked_fill(mask.logical_not(), -inf) : scores + mask;
  Tensor probs = scores.softmax(-1);
  Tensor z = (reference_keep_mask(probs.sizes(), st, p) * attn_dropout::keep_scale(p)).to(probs.dtype());
  return (probs * z).matmul(vv);
}

}  // namespace ember::test
