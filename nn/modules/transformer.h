// The transformer modules of PyTorch's torch.nn (torch/nn/modules/transformer.py), with
// libtorch's class names: TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder,
// TransformerDecoder and Transformer. PyTorch's submodule names (so its state-dict keys),
// defaults, mask handling, initialisation and error texts; batch_first, norm_first and bias as
// Python has them.
#pragma once

#include <optional>
#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"
#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/options/transformer.h"

namespace ember {
namespace nn {

/// Self-attention then a feedforward block (linear1, activation, dropout, linear2), each with a
/// residual connection and a layer norm: after the residual (post-norm, the default) or on the
/// block's input (norm_first). Submodules: self_attn, linear1, dropout, linear2, norm1, norm2,
/// dropout1, dropout2. Keeps its submodules' own initialisation.
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  void reset() override;
  /// Re-initialises every submodule as a fresh layer has it.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// src (S, N, E) ((N, S, E) with batch_first, (S, E) unbatched). src_mask (S, S) or
  /// (N*nhead, S, S) and src_key_padding_mask (N, S): true (or -inf) hides a key, floats are
  /// added. is_causal: a hint that src_mask is the causal mask (which must be given).
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())}, {2, ::ember::nn::AnyValue(::ember::Tensor())}, {3, ::ember::nn::AnyValue(false)})

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};

 private:
  Tensor sa_block(const Tensor& x, const Tensor& attn_mask, const Tensor& key_padding_mask, bool is_causal);
  Tensor ff_block(const Tensor& x);
};
EMBER_MODULE(TransformerEncoderLayer);

/// Self-attention, attention over the encoder's output (memory), then the feedforward block,
/// each with a residual connection and a layer norm (post-norm or norm_first). Submodules:
/// self_attn, multihead_attn, linear1, dropout, linear2, norm1..3, dropout1..3.
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// tgt (T, N, E), memory (S, N, E) ((N, ., E) with batch_first); tgt_mask (T, T), memory_mask
  /// (T, S), key padding masks (N, T) and (N, S); the *_is_causal hints as in the encoder layer.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {}, bool tgt_is_causal = false,
                 bool memory_is_causal = false);
  FORWARD_HAS_DEFAULT_ARGS({2, ::ember::nn::AnyValue(::ember::Tensor())}, {3, ::ember::nn::AnyValue(::ember::Tensor())}, {4, ::ember::nn::AnyValue(::ember::Tensor())}, {5, ::ember::nn::AnyValue(::ember::Tensor())}, {6, ::ember::nn::AnyValue(false)}, {7, ::ember::nn::AnyValue(false)})

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  MultiheadAttention multihead_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  LayerNorm norm3{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
  Dropout dropout3{nullptr};

 private:
  Tensor sa_block(const Tensor& x, const Tensor& attn_mask, const Tensor& key_padding_mask, bool is_causal);
  Tensor mha_block(const Tensor& x, const Tensor& mem, const Tensor& attn_mask,
                   const Tensor& key_padding_mask, bool is_causal);
  Tensor ff_block(const Tensor& x);
};
EMBER_MODULE(TransformerDecoderLayer);

/// num_layers deep copies of an encoder layer (children layers.0, layers.1, ...) run in turn,
/// then the optional final norm.
class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(encoder_layer.ptr(), num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// As TransformerEncoderLayer::forward for every layer. is_causal unset: PyTorch's detection
  /// (mask equal to generate_square_subsequent_mask of the sequence length).
  Tensor forward(const Tensor& src, const Tensor& mask = {}, const Tensor& src_key_padding_mask = {},
                 std::optional<bool> is_causal = std::nullopt);
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())}, {2, ::ember::nn::AnyValue(::ember::Tensor())}, {3, ::ember::nn::AnyValue(std::optional<bool>())})

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
EMBER_MODULE(TransformerEncoder);

/// num_layers deep copies of a decoder layer, then the optional final norm.
class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(decoder_layer.ptr(), num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// As TransformerDecoderLayer::forward for every layer; tgt_is_causal unset: detected from
  /// tgt_mask as in the encoder.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {}, std::optional<bool> tgt_is_causal = std::nullopt,
                 bool memory_is_causal = false);
  FORWARD_HAS_DEFAULT_ARGS({2, ::ember::nn::AnyValue(::ember::Tensor())}, {3, ::ember::nn::AnyValue(::ember::Tensor())}, {4, ::ember::nn::AnyValue(::ember::Tensor())}, {5, ::ember::nn::AnyValue(::ember::Tensor())}, {6, ::ember::nn::AnyValue(std::optional<bool>())}, {7, ::ember::nn::AnyValue(false)})

  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
EMBER_MODULE(TransformerDecoder);

/// The encoder-decoder model of "Attention Is All You Need": encoder (num_encoder_layers layers
/// and a final LayerNorm, encoder.norm) and decoder (likewise, decoder.norm), or the custom ones
/// given. Every parameter with more than one dim is xavier_uniform_-initialised, as PyTorch's.
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  TransformerImpl() : TransformerImpl(TransformerOptions()) {}
  explicit TransformerImpl(TransformerOptions options);
  void reset() override;
  /// PyTorch's _reset_parameters: xavier_uniform_ on every parameter with dim > 1.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// src (S, N, E), tgt (T, N, E) ((N, ., E) with batch_first); the masks as in the encoder and
  /// decoder. Returns the decoder's output (T, N, E).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {},
                 const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& src_key_padding_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {}, std::optional<bool> src_is_causal = std::nullopt,
                 std::optional<bool> tgt_is_causal = std::nullopt, bool memory_is_causal = false);
  FORWARD_HAS_DEFAULT_ARGS({2, ::ember::nn::AnyValue(::ember::Tensor())}, {3, ::ember::nn::AnyValue(::ember::Tensor())}, {4, ::ember::nn::AnyValue(::ember::Tensor())}, {5, ::ember::nn::AnyValue(::ember::Tensor())}, {6, ::ember::nn::AnyValue(::ember::Tensor())}, {7, ::ember::nn::AnyValue(::ember::Tensor())}, {8, ::ember::nn::AnyValue(std::optional<bool>())}, {9, ::ember::nn::AnyValue(std::optional<bool>())}, {10, ::ember::nn::AnyValue(false)})
  /// (sz, sz) mask for causal attention: -inf above the diagonal, 0 elsewhere (float32 unless
  /// options say otherwise).
  static Tensor generate_square_subsequent_mask(int64_t sz, TensorOptions options = {});

  TransformerOptions options;
  TransformerEncoder encoder{nullptr};
  TransformerDecoder decoder{nullptr};
};
EMBER_MODULE(Transformer);

}  // namespace nn
}  // namespace ember
