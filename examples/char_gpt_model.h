// The character-level GPT of examples/char_gpt.cpp: token and position embeddings, N pre-norm
// blocks of causal self-attention and a GELU MLP, a final LayerNorm and a linear head — the
// model of examples/char_gpt.py, with the same module names, so the two load each other's
// safetensors files. Also the key/value cache that sampling uses.
//
// State-dict keys (both sides): tok_emb.weight, pos_emb.weight,
// blocks.<i>.{ln1,attn.qkv,attn.proj,ln2,mlp.fc,mlp.proj}.{weight,bias}, ln_f.{weight,bias},
// head.weight.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <ember/ember.h>

namespace char_gpt {

namespace nn = ember::nn;
namespace F = ember::nn::functional;
using ember::Tensor;

struct Config {
  int64_t vocab_size = 0;
  int64_t block_size = 64;  // the longest context (the position table's length)
  int64_t n_layer = 4, n_head = 4, n_embd = 128;
  double dropout = 0.0;
};

/// Per layer, the keys and values of every position seen so far ([B, n_head, T, head_size]),
/// so that generating one more token runs the network on that token alone.
struct KVCache {
  std::vector<Tensor> keys, values;
  int64_t length = 0;  // positions cached
  void clear() { keys.clear(), values.clear(), length = 0; }
};

/// Causal self-attention: one Linear makes q, k and v for every head, one Linear mixes the
/// heads' outputs.
struct CausalSelfAttentionImpl : nn::Module {
  explicit CausalSelfAttentionImpl(const Config& c)
      : n_head(c.n_head),
        dropout(c.dropout),
        qkv(register_module("qkv", nn::Linear(c.n_embd, 3 * c.n_embd))),
        proj(register_module("proj", nn::Linear(c.n_embd, c.n_embd))),
        resid_dropout(register_module("resid_dropout", nn::Dropout(c.dropout))) {}

  /// x [B, T, C]. Without a cache (training), position t attends to positions ≤ t. With one,
  /// x holds the positions after the cached ones: all of a prompt into an empty cache
  /// (causal), or one new token, which attends to everything cached and itself (no mask).
  Tensor forward(const Tensor& x, KVCache* cache = nullptr, size_t layer = 0) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), hs = C / n_head;
    auto heads = [&](const Tensor& t) { return t.view({B, T, n_head, hs}).transpose(1, 2); };
    ember::TensorList parts = qkv->forward(x).split(C, 2);
    Tensor q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);
    bool causal = true;
    if (cache) {
      if (cache->keys.size() <= layer) {
        cache->keys.push_back(k), cache->values.push_back(v);
      } else {
        k = cache->keys[layer] = ember::cat({cache->keys[layer], k}, 2);
        v = cache->values[layer] = ember::cat({cache->values[layer], v}, 2);
        causal = false;  // T == 1: the newest position sees every cached one
      }
    }
    // The fused kernel (tiled, online softmax, dropout drawn inside it: no [T, T] matrix).
    Tensor y = F::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? dropout : 0.0, causal);
    return resid_dropout->forward(proj->forward(y.transpose(1, 2).contiguous().view({B, T, C})));
  }

  int64_t n_head;
  double dropout;
  nn::Linear qkv, proj;
  nn::Dropout resid_dropout;
};
EMBER_MODULE(CausalSelfAttention);

struct MlpImpl : nn::Module {
  explicit MlpImpl(const Config& c)
      : fc(register_module("fc", nn::Linear(c.n_embd, 4 * c.n_embd))),
        proj(register_module("proj", nn::Linear(4 * c.n_embd, c.n_embd))),
        drop(register_module("drop", nn::Dropout(c.dropout))) {}
  Tensor forward(const Tensor& x) { return drop->forward(proj->forward(F::gelu(fc->forward(x)))); }
  nn::Linear fc, proj;
  nn::Dropout drop;
};
EMBER_MODULE(Mlp);

/// Pre-norm residual block: x + attn(ln1(x)), then x + mlp(ln2(x)).
struct BlockImpl : nn::Module {
  explicit BlockImpl(const Config& c)
      : ln1(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({c.n_embd})))),
        attn(register_module("attn", CausalSelfAttention(c))),
        ln2(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({c.n_embd})))),
        mlp(register_module("mlp", Mlp(c))) {}
  Tensor forward(const Tensor& x, KVCache* cache = nullptr, size_t layer = 0) {
    Tensor h = x + attn->forward(ln1->forward(x), cache, layer);
    return h + mlp->forward(ln2->forward(h));
  }
  nn::LayerNorm ln1;
  CausalSelfAttention attn;
  nn::LayerNorm ln2;
  Mlp mlp;
};
EMBER_MODULE(Block);

struct GptImpl : nn::Module {
  explicit GptImpl(const Config& c)
      : config(c),
        tok_emb(register_module("tok_emb", nn::Embedding(c.vocab_size, c.n_embd))),
        pos_emb(register_module("pos_emb", nn::Embedding(c.block_size, c.n_embd))),
        drop(register_module("drop", nn::Dropout(c.dropout))),
        blocks(register_module("blocks", nn::ModuleList())),
        ln_f(register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({c.n_embd})))),
        head(register_module("head", nn::Linear(nn::LinearOptions(c.n_embd, c.vocab_size).bias(false)))) {
    for (int64_t i = 0; i < c.n_layer; ++i) {
      layers.push_back(Block(c));
      blocks->push_back(layers.back());
    }
    init_weights();
  }

  /// GPT-2's initialisation (as examples/char_gpt.py documents it): normal(0, 0.02) for the
  /// Linear and Embedding weights, zero biases, and the residual projections scaled by
  /// 1/sqrt(2 n_layer). LayerNorms keep ones and zeros.
  void init_weights() {
    ember::NoGradGuard no_grad;
    const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.n_layer));
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      Tensor& p = item.value();
      if (name.find("ln") != std::string::npos) continue;
      if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
        p.zero_();
      } else {
        const bool residual_proj = name.size() >= 11 && name.compare(name.size() - 11, 11, "proj.weight") == 0;
        nn::init::normal_(p, 0.0, residual_proj ? proj_std : 0.02);
      }
    }
  }

  /// idx [B, T] token ids → logits [B, T, vocab]. With a cache, idx continues the cached
  /// positions (see CausalSelfAttention::forward).
  Tensor forward(const Tensor& idx, KVCache* cache = nullptr) {
    const int64_t T = idx.size(1), start = cache ? cache->length : 0;
    Tensor pos = ember::arange(start, start + T, ember::TensorOptions().dtype(ember::kLong).device(idx.device()));
    Tensor x = drop->forward(tok_emb->forward(idx) + pos_emb->forward(pos));
    for (size_t i = 0; i < layers.size(); ++i) x = layers[i]->forward(x, cache, i);
    if (cache) cache->length += T;
    return head->forward(ln_f->forward(x));
  }

  Config config;
  nn::Embedding tok_emb, pos_emb;
  nn::Dropout drop;
  nn::ModuleList blocks;
  std::vector<Block> layers;  // the blocks again, typed (ModuleList holds them as Module)
  nn::LayerNorm ln_f;
  nn::Linear head;
};
EMBER_MODULE(Gpt);

}  // namespace char_gpt
