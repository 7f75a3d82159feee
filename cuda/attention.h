// Fused scaled-dot-product attention on CUDA tensors (the CUDA side of the fused path in
// core/ops/attention.cpp): flash-attention style, tiled over keys with an online softmax, so
// the [L, S] score matrix is never materialised. Plain C++ declarations; the kernels are in
// cuda/attention.cu (cuda/no_cuda.cpp in a build without CUDA), laid out by
// cuda/attention_plan.h.
//
// The contract both sides keep (the op's public function does the checks and conversions):
//   q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev]: dense (contiguous), one floating dtype
//     (float32, float16 or bfloat16), one CUDA device.
//   mask: undefined, or an additive mask of q's dtype broadcast to [B, H, L, S] by strides
//     (an expand()ed view: stride 0 on broadcast dims; read through its strides, never
//     copied). A boolean mask has already been turned into 0 / -inf by the caller.
//   is_causal: key j is visible to query i when j <= i (top-left aligned, as PyTorch's
//     `ones(L, S).tril()`), combined with the mask when both are given.
//   scale: multiplies q·k (the caller resolves PyTorch's default 1/sqrt(E)).
//   A query row that sees no key (all -inf) gives an output row of 0 and a zero gradient,
//     as PyTorch 2.9's math path does (its _safe_softmax).
//   dropout: p > 0 drops probability (b, h, i, j) where attn_dropout::kept says so
//     (core/attention_dropout.h, the CPU kernel's very function, so both devices drop the
//     same elements for one (seed, offset)) and scales the kept ones by 1 / (1 - p); the
//     row's sum and logsumexp are those of the undropped probabilities. The backward takes
//     the forward's AttnDropout and regenerates the mask.
//   Accumulation in float for float16/bfloat16; logsumexp is float32 [B, H, L] (natural
//     log of the row's sum of exp(score), after scale and mask; -inf for a row with no key).
#pragma once

#include <cstdint>

#include "ember/core/attention_dropout.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// Whether the fused kernels take these head sizes and dtype (the caller falls back to the
/// plain composition otherwise). dtype is static_cast<int>(ScalarType); true for float32,
/// float16 and bfloat16 with 1 <= head_dim_qk, head_dim_v <= 256 (cuda/attention_plan.h), and
/// false in a build without CUDA.
bool sdpa_fused_supported(int64_t head_dim_qk, int64_t head_dim_v, int dtype);

/// Forward: writes out [B, H, L, Ev] (q's dtype, dense, allocated by the caller) and
/// logsumexp [B, H, L] (float32, dense, allocated by the caller).
void sdpa_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                  double scale, const AttnDropout& dropout, const Tensor& out, const Tensor& logsumexp);

/// Backward from the forward's out, logsumexp and dropout: writes grad_q, grad_k, grad_v
/// (shapes and dtype of q, k, v; dense; allocated by the caller). grad_out dense, q's dtype.
void sdpa_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                   const Tensor& mask, bool is_causal, double scale, const AttnDropout& dropout,
                   const Tensor& out, const Tensor& logsumexp, const Tensor& grad_q, const Tensor& grad_k,
                   const Tensor& grad_v);

}  // namespace ember::cuda
