// The transformer modules, following PyTorch 2.9's torch/nn/modules/transformer.py: the same
// residual/norm order, mask canonicalisation, causal-mask detection, initialisation and error
// texts. PyTorch's inference fast paths (the fused encoder kernel, nested tensors) are not
// reproduced: they compute the same values, except that nested tensors leave zeros at padded
// positions of the output.
#include "ember/nn/modules/transformer.h"

#include <limits>
#include <type_traits>
#include <utility>

#include "ember/core/error.h"
#include "ember/core/ops/activation.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/unary.h"
#include "ember/nn/init.h"

namespace ember {
namespace nn {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// PyTorch's F._canonical_mask: a boolean mask (true = masked out) becomes 0 / -inf in `dtype`;
/// float masks pass unchanged.
Tensor canonical_mask(const Tensor& mask, const char* mask_name, ScalarType dtype) {
  if (!mask.defined()) return mask;
  EMBER_CHECK(mask.dtype() == kBool || mask.is_floating_point(), "only bool and floating types of ",
              mask_name, " are supported");
  if (mask.is_floating_point()) return mask;
  return zeros(mask.sizes(), TensorOptions().dtype(dtype).device(mask.device())).masked_fill(mask, -kInf);
}

/// PyTorch's _get_seq_len: the sequence length of a (possibly unbatched) input.
int64_t seq_len(const Tensor& src, bool batch_first) {
  if (src.dim() == 2) return src.size(0);
  return src.size(batch_first ? 1 : 0);
}

/// PyTorch's _detect_is_causal_mask: the hint when given, else whether mask is exactly the
/// causal mask of size sz.
bool detect_is_causal_mask(const Tensor& mask, std::optional<bool> is_causal, int64_t sz) {
  if (is_causal.has_value()) return *is_causal;
  if (!mask.defined()) return false;
  Tensor causal = TransformerImpl::generate_square_subsequent_mask(
      sz, TensorOptions().dtype(mask.dtype()).device(mask.device()));
  if (!mask.sizes().equals(causal.sizes())) return false;
  return (mask == causal).all().item<bool>();
}

/// The feedforward activation the options name.
Tensor activate(const activation_t& activation, const Tensor& x) {
  return std::visit(
      [&](const auto& a) -> Tensor {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, enumtype::kReLU>)
          return ember::relu(x);
        else if constexpr (std::is_same_v<A, enumtype::kGELU>)
          return ember::gelu(x);
        else {
          EMBER_CHECK(static_cast<bool>(a), "TransformerLayer: the activation function is empty");
          return a(x);
        }
      },
      activation);
}

/// The attention, linear, norm and dropout submodules both layers share the recipe of.
template <class Options>
MultiheadAttention make_attention(const Options& o) {
  return MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead())
                                .dropout(o.dropout())
                                .bias(o.bias())
                                .batch_first(o.batch_first()));
}
template <class Options>
LayerNorm make_norm(const Options& o) {
  return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()).bias(o.bias()));
}

void check_layer_options(int64_t d_model, int64_t nhead, int64_t dim_feedforward) {
  EMBER_CHECK(d_model > 0 && nhead > 0 && dim_feedforward > 0,
              "d_model, nhead and dim_feedforward must be greater than 0, got d_model=", d_model,
              ", nhead=", nhead, " and dim_feedforward=", dim_feedforward);
}

}  // namespace

// ---- TransformerEncoderLayer ---------------------------------------------------------------

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options_)
    : options(options_) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const auto& o = options;
  check_layer_options(o.d_model(), o.nhead(), o.dim_feedforward());
  // Registration order is PyTorch's __init__ order, which fixes the state-dict key order.
  self_attn = register_module("self_attn", make_attention(o));
  linear1 =
      register_module("linear1", Linear(LinearOptions(o.d_model(), o.dim_feedforward()).bias(o.bias())));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 =
      register_module("linear2", Linear(LinearOptions(o.dim_feedforward(), o.d_model()).bias(o.bias())));
  norm1 = register_module("norm1", make_norm(o));
  norm2 = register_module("norm2", make_norm(o));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

void TransformerEncoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "TransformerEncoderLayer";
}

Tensor TransformerEncoderLayerImpl::sa_block(const Tensor& x, const Tensor& attn_mask,
                                             const Tensor& key_padding_mask, bool is_causal) {
  Tensor out = std::get<0>(self_attn->forward(x, x, x, key_padding_mask, /*need_weights=*/false, attn_mask,
                                              /*average_attn_weights=*/true, is_causal));
  return dropout1->forward(out);
}

Tensor TransformerEncoderLayerImpl::ff_block(const Tensor& x) {
  Tensor h = linear2->forward(dropout->forward(activate(options.activation(), linear1->forward(x))));
  return dropout2->forward(h);
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  Tensor kpm = canonical_mask(src_key_padding_mask, "src_key_padding_mask", src.dtype());
  Tensor mask = canonical_mask(src_mask, "src_mask", src.dtype());
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa_block(norm1->forward(x), mask, kpm, is_causal);
    return x + ff_block(norm2->forward(x));
  }
  x = norm1->forward(x + sa_block(x, mask, kpm, is_causal));
  return norm2->forward(x + ff_block(x));
}

// ---- TransformerDecoderLayer ---------------------------------------------------------------

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options_)
    : options(options_) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const auto& o = options;
  check_layer_options(o.d_model(), o.nhead(), o.dim_feedforward());
  self_attn = register_module("self_attn", make_attention(o));
  multihead_attn = register_module("multihead_attn", make_attention(o));
  linear1 =
      register_module("linear1", Linear(LinearOptions(o.d_model(), o.dim_feedforward()).bias(o.bias())));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 =
      register_module("linear2", Linear(LinearOptions(o.dim_feedforward(), o.d_model()).bias(o.bias())));
  norm1 = register_module("norm1", make_norm(o));
  norm2 = register_module("norm2", make_norm(o));
  norm3 = register_module("norm3", make_norm(o));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  multihead_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

void TransformerDecoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "TransformerDecoderLayer";
}

Tensor TransformerDecoderLayerImpl::sa_block(const Tensor& x, const Tensor& attn_mask,
                                             const Tensor& key_padding_mask, bool is_causal) {
  Tensor out = std::get<0>(self_attn->forward(x, x, x, key_padding_mask, /*need_weights=*/false, attn_mask,
                                              /*average_attn_weights=*/true, is_causal));
  return dropout1->forward(out);
}

Tensor TransformerDecoderLayerImpl::mha_block(const Tensor& x, const Tensor& mem, const Tensor& attn_mask,
                                              const Tensor& key_padding_mask, bool is_causal) {
  Tensor out = std::get<0>(multihead_attn->forward(x, mem, mem, key_padding_mask, /*need_weights=*/false,
                                                   attn_mask, /*average_attn_weights=*/true, is_causal));
  return dropout2->forward(out);
}

Tensor TransformerDecoderLayerImpl::ff_block(const Tensor& x) {
  Tensor h = linear2->forward(dropout->forward(activate(options.activation(), linear1->forward(x))));
  return dropout3->forward(h);
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                            bool memory_is_causal) {
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + sa_block(norm1->forward(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal);
    x = x + mha_block(norm2->forward(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal);
    return x + ff_block(norm3->forward(x));
  }
  x = norm1->forward(x + sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal));
  x = norm2->forward(x + mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal));
  return norm3->forward(x + ff_block(x));
}

// ---- TransformerEncoder / TransformerDecoder ------------------------------------------------

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options_)
    : options(std::move(options_)) {
  if (!options.encoder_layer() && options.layer_options)
    options.encoder_layer(std::make_shared<TransformerEncoderLayerImpl>(*options.layer_options));
  reset();
}

void TransformerEncoderImpl::reset() {
  EMBER_CHECK(options.encoder_layer() != nullptr, "TransformerEncoder: encoder_layer is not set");
  EMBER_CHECK(options.num_layers() >= 0, "TransformerEncoder: num_layers must be non-negative, got ",
              options.num_layers());
  // PyTorch's _get_clones: independent deep copies, never the given layer itself.
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) layers->push_back(options.encoder_layer()->clone());
  if (!options.norm().is_empty()) {
    norm = options.norm().clone();
    register_module("norm", norm.ptr());
  }
}

void TransformerEncoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) layers->ptr<TransformerEncoderLayerImpl>(i)->reset_parameters();
  if (!norm.is_empty()) {
    auto ln = std::dynamic_pointer_cast<LayerNormImpl>(norm.ptr());
    if (ln) ln->reset_parameters();
  }
}

void TransformerEncoderImpl::pretty_print(std::ostream& stream) const { stream << "TransformerEncoder"; }

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask,
                                       const Tensor& src_key_padding_mask, std::optional<bool> is_causal) {
  Tensor kpm = canonical_mask(src_key_padding_mask, "src_key_padding_mask", src.dtype());
  Tensor m = canonical_mask(mask, "mask", src.dtype());
  bool causal = false;
  if (layers->size() > 0) {
    auto first = layers->ptr<TransformerEncoderLayerImpl>(0);
    causal = detect_is_causal_mask(m, is_causal, seq_len(src, first->options.batch_first()));
  }
  Tensor output = src;
  for (size_t i = 0; i < layers->size(); ++i)
    output = layers->ptr<TransformerEncoderLayerImpl>(i)->forward(output, m, kpm, causal);
  if (!norm.is_empty()) output = norm.forward(output);
  return output;
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options_)
    : options(std::move(options_)) {
  if (!options.decoder_layer() && options.layer_options)
    options.decoder_layer(std::make_shared<TransformerDecoderLayerImpl>(*options.layer_options));
  reset();
}

void TransformerDecoderImpl::reset() {
  EMBER_CHECK(options.decoder_layer() != nullptr, "TransformerDecoder: decoder_layer is not set");
  EMBER_CHECK(options.num_layers() >= 0, "TransformerDecoder: num_layers must be non-negative, got ",
              options.num_layers());
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) layers->push_back(options.decoder_layer()->clone());
  if (!options.norm().is_empty()) {
    norm = options.norm().clone();
    register_module("norm", norm.ptr());
  }
}

void TransformerDecoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) layers->ptr<TransformerDecoderLayerImpl>(i)->reset_parameters();
  if (!norm.is_empty()) {
    auto ln = std::dynamic_pointer_cast<LayerNormImpl>(norm.ptr());
    if (ln) ln->reset_parameters();
  }
}

void TransformerDecoderImpl::pretty_print(std::ostream& stream) const { stream << "TransformerDecoder"; }

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask,
                                       std::optional<bool> tgt_is_causal, bool memory_is_causal) {
  bool causal = false;
  if (layers->size() > 0) {
    auto first = layers->ptr<TransformerDecoderLayerImpl>(0);
    causal = detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len(tgt, first->options.batch_first()));
  }
  Tensor output = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    output = layers->ptr<TransformerDecoderLayerImpl>(i)->forward(
        output, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, causal,
        memory_is_causal);
  if (!norm.is_empty()) output = norm.forward(output);
  return output;
}

// ---- Transformer ----------------------------------------------------------------------------

TransformerImpl::TransformerImpl(TransformerOptions options_) : options(std::move(options_)) { reset(); }

void TransformerImpl::reset() {
  const auto& o = options;
  // Custom coders are copied (as libtorch does), so clones never share them.
  if (o.custom_encoder()) {
    encoder = register_module("encoder",
                              std::dynamic_pointer_cast<TransformerEncoderImpl>(o.custom_encoder()->clone()));
  } else {
    auto layer = TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                     .dim_feedforward(o.dim_feedforward())
                     .dropout(o.dropout())
                     .activation(o.activation())
                     .layer_norm_eps(o.layer_norm_eps())
                     .batch_first(o.batch_first())
                     .norm_first(o.norm_first())
                     .bias(o.bias());
    encoder = register_module(
        "encoder",
        TransformerEncoder(
            TransformerEncoderOptions(layer, o.num_encoder_layers()).norm(AnyModule(make_norm(o)))));
  }
  if (o.custom_decoder()) {
    decoder = register_module("decoder",
                              std::dynamic_pointer_cast<TransformerDecoderImpl>(o.custom_decoder()->clone()));
  } else {
    auto layer = TransformerDecoderLayerOptions(o.d_model(), o.nhead())
                     .dim_feedforward(o.dim_feedforward())
                     .dropout(o.dropout())
                     .activation(o.activation())
                     .layer_norm_eps(o.layer_norm_eps())
                     .batch_first(o.batch_first())
                     .norm_first(o.norm_first())
                     .bias(o.bias());
    decoder = register_module(
        "decoder",
        TransformerDecoder(
            TransformerDecoderOptions(layer, o.num_decoder_layers()).norm(AnyModule(make_norm(o)))));
  }
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (auto& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

void TransformerImpl::pretty_print(std::ostream& stream) const { stream << "Transformer"; }

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask, const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask, std::optional<bool> src_is_causal,
                                std::optional<bool> tgt_is_causal, bool memory_is_causal) {
  const bool is_batched = src.dim() == 3;
  const int64_t batch_dim = options.batch_first() ? 0 : 1;
  EMBER_CHECK(!is_batched || src.size(batch_dim) == tgt.size(batch_dim),
              "the batch number of src and tgt must be equal");
  EMBER_CHECK(src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
              "the feature number of src and tgt must be equal to d_model");
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask, src_is_causal);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                          tgt_is_causal, memory_is_causal);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz, TensorOptions options) {
  return triu(full({sz, sz}, -kInf, options), 1);
}

}  // namespace nn
}  // namespace ember
