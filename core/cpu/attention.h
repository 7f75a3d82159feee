// The CPU kernels of fused scaled-dot-product attention (the op is in core/ops/attention.cpp):
// flash-attention style, tiles of queries against tiles of keys with an online softmax, so
// the [L, S] score matrix is never materialised; the backward recomputes the probabilities
// tile by tile from the saved logsumexp, and the dropout mask from its Philox (seed, offset).
#pragma once

#include "ember/core/attention_dropout.h"
#include "ember/core/tensor.h"

namespace ember::cpu {

// The contract is cuda/attention.h's, with one difference: logsumexp is float64 for float64
// inputs (float32 otherwise), so a float64 gradcheck of the fused path is exact.
//   q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev]: dense, one floating dtype.
//   mask: undefined, or an additive mask of q's dtype viewed as [B, H, L, S] by its strides
//     (stride 0 on broadcast dims), read in place.
//   is_causal: key j is visible to query i when j <= i (top-left aligned).
//   A query row that sees no key gives an output row of 0, logsumexp -inf and zero gradients.
//   dropout: p > 0 drops element (b, h, i, j) of the probabilities as attn_dropout::kept says
//     (core/attention_dropout.h) and scales the kept ones by 1 / (1 - p); the softmax's sum
//     and logsumexp are those of the undropped probabilities (as flash attention's).
// Half and BFloat16 compute in float.

/// Writes out [B, H, L, Ev] (q's dtype, dense) and logsumexp [B, H, L] (dense).
void sdpa_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                  double scale, const AttnDropout& dropout, Tensor& out, Tensor& logsumexp);

/// Writes grad_q, grad_k, grad_v (dense, shaped as q, k, v) from the forward's out and
/// logsumexp and the forward's dropout; grad_out dense, q's dtype.
void sdpa_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                   const Tensor& mask, bool is_causal, double scale, const AttnDropout& dropout,
                   const Tensor& out, const Tensor& logsumexp, Tensor& grad_q, Tensor& grad_k,
                   Tensor& grad_v);

}  // namespace ember::cpu
