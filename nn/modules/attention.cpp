// MultiheadAttention and F::multi_head_attention_forward, following PyTorch 2.9's Python
// (torch/nn/functional.py): the same mask conventions, shape checks and error texts, the
// plain attention when the weights are asked for, scaled_dot_product_attention otherwise.
#include "ember/nn/modules/attention.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/dropout.h"
#include "ember/core/ops/linalg.h"
#include "ember/core/ops/padding.h"
#include "ember/core/ops/shape.h"
#include "ember/nn/init.h"

namespace ember {
namespace nn {

namespace functional {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string shape_str(IntArrayRef s) {
  std::ostringstream os;
  os << "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "])";
  return os.str();
}

/// PyTorch's _mha_shape_check: whether the call is batched, checking the operands' dims.
bool mha_shape_check(const Tensor& query, const Tensor& key, const Tensor& value,
                     const Tensor& key_padding_mask, const Tensor& attn_mask, int64_t num_heads) {
  if (query.dim() == 3) {
    EMBER_CHECK(key.dim() == 3 && value.dim() == 3,
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found ", key.dim(),
                "-D and ", value.dim(), "-D tensors respectively");
    EMBER_CHECK(!key_padding_mask.defined() || key_padding_mask.dim() == 2,
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found ",
                key_padding_mask.dim(), "-D tensor instead");
    EMBER_CHECK(!attn_mask.defined() || attn_mask.dim() == 2 || attn_mask.dim() == 3,
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found ",
                attn_mask.dim(), "-D tensor instead");
    return true;
  }
  EMBER_CHECK(query.dim() == 2, "query should be unbatched 2D or batched 3D tensor but received ",
              query.dim(), "-D query tensor");
  EMBER_CHECK(key.dim() == 2 && value.dim() == 2,
              "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found ", key.dim(),
              "-D and ", value.dim(), "-D tensors respectively");
  EMBER_CHECK(!key_padding_mask.defined() || key_padding_mask.dim() == 1,
              "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found ",
              key_padding_mask.dim(), "-D tensor instead");
  if (attn_mask.defined()) {
    EMBER_CHECK(attn_mask.dim() == 2 || attn_mask.dim() == 3,
                "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found ",
                attn_mask.dim(), "-D tensor instead");
    if (attn_mask.dim() == 3) {
      DimVector expected{num_heads, query.size(0), key.size(0)};
      EMBER_CHECK(attn_mask.sizes().equals(expected), "Expected `attn_mask` shape to be (", num_heads, ", ",
                  query.size(0), ", ", key.size(0), ") but got ", shape_str(attn_mask.sizes()));
    }
  }
  return false;
}

/// PyTorch's _canonical_mask: a boolean mask (true = masked out) becomes 0 / -inf in `dtype`;
/// float masks pass unchanged.
Tensor canonical_mask(const Tensor& mask, const char* mask_name, ScalarType dtype) {
  if (!mask.defined()) return mask;
  EMBER_CHECK(mask.dtype() == kBool || mask.is_floating_point(), "only bool and floating types of ",
              mask_name, " are supported");
  if (mask.is_floating_point()) return mask;
  return zeros(mask.sizes(), TensorOptions().dtype(dtype).device(mask.device())).masked_fill(mask, -kInf);
}

/// PyTorch's _in_projection_packed: one product for self-attention, q and shared kv apart for
/// encoder-decoder attention, three otherwise.
std::tuple<Tensor, Tensor, Tensor> in_projection_packed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                        const Tensor& w, const Tensor& b) {
  const int64_t E = q.size(-1);
  auto part = [&](int64_t i, int64_t n) {
    return std::make_pair(w.narrow(0, i * E, n * E), b.defined() ? b.narrow(0, i * E, n * E) : Tensor());
  };
  if (k.is_same(v) && q.is_same(k)) {
    TensorList proj = linear(q, w, b).chunk(3, -1);
    return {proj[0].contiguous(), proj[1].contiguous(), proj[2].contiguous()};
  }
  auto [wq, bq] = part(0, 1);
  if (k.is_same(v)) {
    auto [wkv, bkv] = part(1, 2);
    TensorList kv = linear(k, wkv, bkv).chunk(2, -1);
    return {linear(q, wq, bq), kv[0].contiguous(), kv[1].contiguous()};
  }
  auto [wk, bk] = part(1, 1);
  auto [wv, bv] = part(2, 1);
  return {linear(q, wq, bq), linear(k, wk, bk), linear(v, wv, bv)};
}

/// The attn_mask as (1 or N*H, L, S), with PyTorch's texts for a wrong shape.
Tensor attn_mask_3d(const Tensor& mask, int64_t tgt_len, int64_t src_len, int64_t bsz, int64_t num_heads) {
  if (mask.dim() == 2) {
    EMBER_CHECK(mask.size(0) == tgt_len && mask.size(1) == src_len, "The shape of the 2D attn_mask is ",
                shape_str(mask.sizes()), ", but should be (", tgt_len, ", ", src_len, ").");
    return mask.unsqueeze(0);
  }
  EMBER_CHECK(mask.dim() == 3, "attn_mask's dimension ", mask.dim(), " is not supported");
  EMBER_CHECK(mask.size(0) == bsz * num_heads && mask.size(1) == tgt_len && mask.size(2) == src_len,
              "The shape of the 3D attn_mask is ", shape_str(mask.sizes()), ", but should be (",
              bsz * num_heads, ", ", tgt_len, ", ", src_len, ").");
  return mask;
}

/// Masks and operands after the in-projection, in PyTorch's (N*H, ., head_dim) layout.
struct Heads {
  Tensor q, k, v, attn_mask, key_padding_mask;
  bool is_causal;
};

/// bias_k/bias_v and add_zero_attn append one key (and a 0 column to the masks).
void append_keys(Heads& h, const MultiheadAttentionForwardFuncOptions& o, int64_t bsz, int64_t num_heads,
                 int64_t head_dim) {
  if (o.bias_k().defined() && o.bias_v().defined()) {
    EMBER_CHECK(!o.static_k().defined(), "bias cannot be added to static key.");
    EMBER_CHECK(!o.static_v().defined(), "bias cannot be added to static value.");
    h.k = cat({h.k, o.bias_k().repeat({1, bsz, 1})});
    h.v = cat({h.v, o.bias_v().repeat({1, bsz, 1})});
    if (h.attn_mask.defined()) h.attn_mask = pad(h.attn_mask, {0, 1});
    if (h.key_padding_mask.defined()) h.key_padding_mask = pad(h.key_padding_mask, {0, 1});
  } else {
    EMBER_CHECK(!o.bias_k().defined() && !o.bias_v().defined(), "bias_k and bias_v must be given together");
  }
  auto heads_first = [&](const Tensor& t, const Tensor& fixed, const char* name) {
    if (!fixed.defined()) return t.view({t.size(0), bsz * num_heads, head_dim}).transpose(0, 1);
    EMBER_CHECK(fixed.size(0) == bsz * num_heads, "expecting ", name, ".size(0) of ", bsz * num_heads,
                ", but got ", fixed.size(0));
    EMBER_CHECK(fixed.size(2) == head_dim, "expecting ", name, ".size(2) of ", head_dim, ", but got ",
                fixed.size(2));
    return fixed;
  };
  h.q = h.q.view({h.q.size(0), bsz * num_heads, head_dim}).transpose(0, 1);
  h.k = heads_first(h.k, o.static_k(), "static_k");
  h.v = heads_first(h.v, o.static_v(), "static_v");
  if (o.add_zero_attn()) {
    h.k = cat({h.k, zeros({bsz * num_heads, 1, head_dim}, h.k.options())}, 1);
    h.v = cat({h.v, zeros({bsz * num_heads, 1, head_dim}, h.v.options())}, 1);
    if (h.attn_mask.defined()) h.attn_mask = pad(h.attn_mask, {0, 1});
    if (h.key_padding_mask.defined()) h.key_padding_mask = pad(h.key_padding_mask, {0, 1});
  }
}

/// Folds the key padding mask into the attention mask as (N*H, 1, S), added.
void merge_padding(Heads& h, int64_t bsz, int64_t num_heads) {
  if (!h.key_padding_mask.defined()) return;
  const int64_t src_len = h.k.size(1);
  EMBER_CHECK(h.key_padding_mask.size(0) == bsz, "Expected key_padded_mask.shape[0] to be ", bsz,
              ", but got ", h.key_padding_mask.size(0));
  EMBER_CHECK(h.key_padding_mask.size(1) == src_len, "Expected key_padded_mask.shape[1] to be ", src_len,
              ", but got ", h.key_padding_mask.size(1));
  Tensor kpm = h.key_padding_mask.view({bsz, 1, 1, src_len})
                   .expand({-1, num_heads, -1, -1})
                   .reshape({bsz * num_heads, 1, src_len});
  h.attn_mask = h.attn_mask.defined() ? h.attn_mask + kpm : kpm;
}

std::tuple<Tensor, Tensor, Tensor> project(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const MultiheadAttentionForwardFuncOptions& o) {
  if (!o.use_separate_proj_weight()) {
    EMBER_CHECK(o.in_proj_weight().defined(), "use_separate_proj_weight is False but in_proj_weight is None");
    return in_projection_packed(query, key, value, o.in_proj_weight(), o.in_proj_bias());
  }
  EMBER_CHECK(o.q_proj_weight().defined(), "use_separate_proj_weight is True but q_proj_weight is None");
  EMBER_CHECK(o.k_proj_weight().defined(), "use_separate_proj_weight is True but k_proj_weight is None");
  EMBER_CHECK(o.v_proj_weight().defined(), "use_separate_proj_weight is True but v_proj_weight is None");
  TensorList b =
      o.in_proj_bias().defined() ? o.in_proj_bias().chunk(3) : TensorList{Tensor(), Tensor(), Tensor()};
  return {linear(query, o.q_proj_weight(), b[0]), linear(key, o.k_proj_weight(), b[1]),
          linear(value, o.v_proj_weight(), b[2])};
}

/// The weights path: softmax(q k^T / sqrt(d) + mask), kept and returned.
std::tuple<Tensor, Tensor> attend_with_weights(const Heads& h, double dropout_p, int64_t bsz,
                                               int64_t num_heads) {
  const int64_t tgt_len = h.q.size(1), src_len = h.k.size(1);
  Tensor q_scaled = h.q * std::sqrt(1.0 / static_cast<double>(h.q.size(2)));
  // The is_causal hint needs attn_mask (checked on entry), and on this path the mask is kept:
  // the causal structure is in h.attn_mask, so the hint itself needs nothing here.
  Tensor w = h.attn_mask.defined() ? baddbmm(h.attn_mask, q_scaled, h.k.transpose(-2, -1))
                                   : q_scaled.bmm(h.k.transpose(-2, -1));
  w = w.softmax(-1);
  if (dropout_p > 0.0) w = dropout(w, dropout_p, true);
  Tensor out = w.bmm(h.v);
  return {out.transpose(0, 1).contiguous().view({tgt_len * bsz, -1}),
          w.view({bsz, num_heads, tgt_len, src_len})};
}

/// The fused path: scaled_dot_product_attention on (N, H, L, d).
Tensor attend_fused(const Heads& h, double dropout_p, int64_t bsz, int64_t num_heads) {
  const int64_t tgt_len = h.q.size(1), src_len = h.k.size(1), head_dim = h.q.size(2);
  Tensor mask = h.attn_mask;
  if (mask.defined())
    mask =
        mask.size(0) == 1 && mask.dim() == 3 ? mask.unsqueeze(0) : mask.view({bsz, num_heads, -1, src_len});
  Tensor q = h.q.view({bsz, num_heads, tgt_len, head_dim});
  Tensor k = h.k.view({bsz, num_heads, src_len, head_dim});
  Tensor v = h.v.view({bsz, num_heads, src_len, head_dim});
  Tensor out = ember::scaled_dot_product_attention(q, k, v, mask, dropout_p, h.is_causal);
  return out.permute({2, 0, 1, 3}).contiguous().view({bsz * tgt_len, -1});
}

}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query_in, const Tensor& key_in,
                                                        const Tensor& value_in,
                                                        const MultiheadAttentionForwardFuncOptions& o) {
  const int64_t num_heads = o.num_heads();
  Tensor kpm_in = o.key_padding_mask();
  const bool batched = mha_shape_check(query_in, key_in, value_in, kpm_in, o.attn_mask(), num_heads);
  Tensor query = batched ? query_in : query_in.unsqueeze(1);
  Tensor key = batched ? key_in : (key_in.is_same(query_in) ? query : key_in.unsqueeze(1));
  Tensor value = batched ? value_in : (value_in.is_same(key_in) ? key : value_in.unsqueeze(1));
  if (!batched && kpm_in.defined()) kpm_in = kpm_in.unsqueeze(0);
  const int64_t tgt_len = query.size(0), bsz = query.size(1), embed_dim = query.size(2);
  Heads h;
  h.is_causal = o.is_causal();
  h.key_padding_mask = canonical_mask(kpm_in, "key_padding_mask", query.dtype());
  EMBER_CHECK(!(h.is_causal && !o.attn_mask().defined()),
              "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
              "`generate_square_subsequent_mask` to create this mask.");
  if (h.is_causal && !h.key_padding_mask.defined() && !o.need_weights()) {
    // SDPA applies the causal mask itself; the given mask is only the hint's shape.
  } else {
    h.attn_mask = canonical_mask(o.attn_mask(), "attn_mask", query.dtype());
    if (h.key_padding_mask.defined()) h.is_causal = false;
  }
  EMBER_CHECK(embed_dim == o.embed_dim_to_check(), "was expecting embedding dimension of ",
              o.embed_dim_to_check(), ", but got ", embed_dim);
  const int64_t head_dim = embed_dim / num_heads;
  EMBER_CHECK(head_dim * num_heads == embed_dim, "embed_dim ", embed_dim, " not divisible by num_heads ",
              num_heads);
  if (o.use_separate_proj_weight())
    EMBER_CHECK(key.size(0) == value.size(0) && key.size(1) == value.size(1),
                "key's sequence and batch dims ", shape_str(key.sizes().slice(0, 2)),
                " do not match value's ", shape_str(value.sizes().slice(0, 2)));
  else
    EMBER_CHECK(key.sizes().equals(value.sizes()), "key shape ", shape_str(key.sizes()),
                " does not match value shape ", shape_str(value.sizes()));
  std::tie(h.q, h.k, h.v) = project(query, key, value, o);
  if (h.attn_mask.defined()) h.attn_mask = attn_mask_3d(h.attn_mask, tgt_len, key.size(0), bsz, num_heads);
  append_keys(h, o, bsz, num_heads, head_dim);
  merge_padding(h, bsz, num_heads);
  const double dropout_p = o.training() ? o.dropout_p() : 0.0;
  Tensor out, weights;
  if (o.need_weights())
    std::tie(out, weights) = attend_with_weights(h, dropout_p, bsz, num_heads);
  else
    out = attend_fused(h, dropout_p, bsz, num_heads);
  out = linear(out, o.out_proj_weight(), o.out_proj_bias()).view({tgt_len, bsz, -1});
  if (weights.defined() && o.average_attn_weights()) weights = weights.mean({1});
  if (!batched) {
    out = out.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  }
  return {out, weights};
}

}  // namespace functional

// ---- MultiheadAttention ---------------------------------------------------------------------

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_)
    : options(options_) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  EMBER_CHECK(E > 0 && H > 0, "embed_dim and num_heads must be greater than 0, got embed_dim=", E,
              " and num_heads=", H, " instead");
  head_dim = E / H;
  EMBER_CHECK(head_dim * H == E, "embed_dim must be divisible by num_heads");
  qkv_same_embed_dim = options.kdim() == E && options.vdim() == E;
  if (qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, options.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, options.vdim()}));
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
  // PyTorch's NonDynamicallyQuantizableLinear is a Linear (the name only steers quantization).
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(options.bias())));
  if (options.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, E}));
    bias_v = register_parameter("bias_v", empty({1, 1, E}));
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  if (qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

void MultiheadAttentionImpl::pretty_print(std::ostream& stream) const { stream << "MultiheadAttention"; }

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                           const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights,
                                                           bool is_causal) {
  const bool batched = query.dim() == 3;
  Tensor q = query, k = key, v = value;
  if (options.batch_first() && batched) {
    // Keep self-attention's "same tensor" identity through the transposes (one projection).
    q = query.transpose(1, 0);
    k = key.is_same(query) ? q : key.transpose(1, 0);
    v = value.is_same(key) ? k : value.transpose(1, 0);
  }
  functional::MultiheadAttentionForwardFuncOptions o(options.embed_dim(), options.num_heads(), in_proj_weight,
                                                     in_proj_bias, bias_k, bias_v, options.add_zero_attn(),
                                                     options.dropout(), out_proj->weight, out_proj->bias);
  o.training(is_training())
      .key_padding_mask(key_padding_mask)
      .need_weights(need_weights)
      .attn_mask(attn_mask)
      .average_attn_weights(average_attn_weights)
      .is_causal(is_causal);
  if (!qkv_same_embed_dim)
    o.use_separate_proj_weight(true)
        .q_proj_weight(q_proj_weight)
        .k_proj_weight(k_proj_weight)
        .v_proj_weight(v_proj_weight);
  auto [out, weights] = functional::multi_head_attention_forward(q, k, v, o);
  if (options.batch_first() && batched) out = out.transpose(1, 0);
  return {out, weights};
}

}  // namespace nn
}  // namespace ember
