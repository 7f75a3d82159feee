// MultiheadAttention (PyTorch's torch.nn.MultiheadAttention, batch_first included): in
// projections, scaled-dot-product attention per head, out projection; PyTorch's parameter
// names, state-dict keys and initialisation.
#pragma once

#include <ostream>
#include <tuple>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/options/attention.h"

namespace ember {
namespace nn {

/// Attention over num_heads heads of embed_dim / num_heads features. Parameters: in_proj_weight
/// [3E, E] (or q/k/v_proj_weight when kdim or vdim differ from E), in_proj_bias [3E],
/// out_proj (a Linear), and bias_k / bias_v [1, 1, E] with add_bias_kv.
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset() override;
  /// PyTorch's _reset_parameters: xavier_uniform_ in-projection weights, zero biases,
  /// xavier_normal_ bias_k / bias_v; out_proj.weight keeps Linear's initialisation.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// query (L, N, E) ((N, L, E) with batch_first, (L, E) unbatched), key/value (S, N, kdim/vdim).
  /// key_padding_mask (N, S): true (or -inf) hides a key; attn_mask (L, S) or (N*num_heads, L, S):
  /// true hides, floats are added. Returns (attn_output, attn_weights): weights (N, L, S)
  /// averaged over heads, (N, num_heads, L, S) when not averaged, undefined unless need_weights.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  FORWARD_HAS_DEFAULT_ARGS({3, ::ember::nn::AnyValue(::ember::Tensor())}, {4, ::ember::nn::AnyValue(true)}, {5, ::ember::nn::AnyValue(::ember::Tensor())}, {6, ::ember::nn::AnyValue(true)}, {7, ::ember::nn::AnyValue(false)})

  MultiheadAttentionOptions options;
  int64_t head_dim = 0;
  bool qkv_same_embed_dim = true;
  Tensor in_proj_weight, in_proj_bias;
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  Tensor bias_k, bias_v;
  Linear out_proj{nullptr};
};
EMBER_MODULE(MultiheadAttention);

}  // namespace nn
}  // namespace ember
