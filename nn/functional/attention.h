// F::scaled_dot_product_attention and F::multi_head_attention_forward (torch.nn.functional's).
// The attention itself is core/ops/attention.h (fused per device, plain composition beside it);
// multi_head_attention_forward is in nn/modules/attention.cpp.
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/ops/attention.h"
#include "ember/nn/options/attention.h"

namespace ember {
namespace nn {
namespace functional {

/// softmax(q k^T * scale + mask) v; see ember::scaled_dot_product_attention.
inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                           bool is_causal = false, std::optional<double> scale = std::nullopt,
                                           bool enable_gqa = false) {
  return ember::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                             enable_gqa);
}

/// Multi-head attention over (L, N, E) / unbatched (L, E) query and (S, N, E) key and value:
/// returns (attn_output, attn_weights), the weights undefined unless need_weights.
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key,
                                                        const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& options);

namespace detail {
/// The plain composition of scaled_dot_product_attention (matmul, safe softmax, dropout,
/// matmul): the fused path's oracle, and the path a mask that needs a gradient takes.
inline Tensor sdpa_math(const Tensor& query, const Tensor& key, const Tensor& value,
                        const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false,
                        std::optional<double> scale = std::nullopt, bool enable_gqa = false) {
  return ember::detail::sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}
}  // namespace detail

}  // namespace functional
}  // namespace nn
}  // namespace ember
