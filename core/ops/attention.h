// scaled_dot_product_attention (torch::scaled_dot_product_attention, PyTorch 2.9's semantics):
// a fused flash-attention-style op on each device (core/cpu/attention.h, cuda/attention.h)
// that never materialises the [L, S] score matrix, dropout included (core/attention_dropout.h),
// and the plain composition beside it (matmul, softmax, matmul) as the test oracle.
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// softmax(q k^T * scale + mask) v over the last two dims: query (N..., L, E), key
/// (N..., S, E), value (N..., S, Ev) -> (N..., L, Ev), batch dims broadcast. attn_mask:
/// boolean (true = take part) or additive float, broadcast to (N..., L, S); is_causal masks
/// key j > query i (not together with attn_mask); scale defaults to 1/sqrt(E); enable_gqa
/// lets key/value have fewer heads (dim -3) than query, each shared by a group of query heads.
/// A query that sees no key gives zeros (and zero gradients). dropout_p > 0 always drops (as
/// the functional form does: pass 0 in eval), inside the fused op: its mask is never stored.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false);

/// The fused op itself on 4-D operands: q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] of
/// one floating dtype, attn_mask undefined or an additive mask of q's dtype broadcastable to
/// [B, H, L, S] (it gets no gradient). Returns (output [B, H, L, Ev], logsumexp [B, H, L]:
/// float32, or float64 for float64 inputs).
std::tuple<Tensor, Tensor> _scaled_dot_product_fused_attention(const Tensor& query, const Tensor& key,
                                                               const Tensor& value, const Tensor& attn_mask,
                                                               bool is_causal, double scale);

namespace detail {
/// The plain composition: softmax((q k^T) * scale + mask) v with PyTorch's safe softmax
/// (rows with no visible key give 0), dropout when dropout_p > 0. Same arguments, checks and
/// results as scaled_dot_product_attention (dropout's mask aside: ember's dropout, not the
/// fused kernels' Philox mask); the oracle of the fused path, and the path that runs when the
/// mask needs a gradient.
Tensor sdpa_math(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask = {},
                 double dropout_p = 0.0, bool is_causal = false, std::optional<double> scale = std::nullopt,
                 bool enable_gqa = false);
/// scaled_dot_product_attention forced onto the fused op (for tests and benchmarks): the same
/// checks, broadcasting and GQA, no dropout (the public function takes it with dropout).
Tensor sdpa_fused(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask = {},
                  bool is_causal = false, std::optional<double> scale = std::nullopt,
                  bool enable_gqa = false);
}  // namespace detail

}  // namespace ember
