// scaled_dot_product_attention and MultiheadAttention against PyTorch 2.9.1
// (fixtures/make_attention_fixture.py: outputs and gradients for the same inputs and weights,
// the weights loaded by PyTorch's state-dict keys), MultiheadAttention's parameters, keys and
// initialisation, a float64 gradcheck, the weights and SDPA paths agreeing, error texts.
#include <cmath>
#include <string>

#include "ember/core/ops/creation.h"
#include "ember/core/serialize.h"
#include "ember/nn/modules/attention.h"
#include "fixtures/attention_fixture.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;

namespace {

using Dict = OrderedDict<std::string, Tensor>;

const Dict& fixture() {
  static const Dict d = deserialize_safetensors(kAttentionFixture, sizeof(kAttentionFixture));
  return d;
}

Tensor fx(const std::string& key) {
  INFO("fixture key " << key);
  REQUIRE(fixture().contains(key));
  return fixture()[key];
}

bool has(const std::string& key) { return fixture().contains(key); }

/// The entries under `prefix`, with the prefix taken off (a module's state dict).
Dict sub_dict(const std::string& prefix) {
  Dict out;
  for (const auto& item : fixture())
    if (item.key().rfind(prefix, 0) == 0) out.insert(item.key().substr(prefix.size()), item.value());
  return out;
}

Tensor grad_leaf(const Tensor& t) { return t.detach().clone().requires_grad_(true); }

void check_sdpa_case(const std::string& name, const Tensor& mask, bool causal, std::optional<double> scale,
                     bool gqa) {
  INFO("case " << name);
  Tensor q = grad_leaf(fx(name + ".q")), k = grad_leaf(fx(name + ".k")), v = grad_leaf(fx(name + ".v"));
  Tensor out = scaled_dot_product_attention(q, k, v, mask, 0.0, causal, scale, gqa);
  (out * fx(name + ".gout")).sum().backward();
  check_close(out, fx(name + ".out"), 1e-12, 1e-10);
  check_close(q.grad(), fx(name + ".gq"), 1e-12, 1e-10);
  check_close(k.grad(), fx(name + ".gk"), 1e-12, 1e-10);
  check_close(v.grad(), fx(name + ".gv"), 1e-12, 1e-10);
  // The plain composition too (the fixture is independent of both paths).
  Tensor plain = nn::functional::detail::sdpa_math(q, k, v, mask, 0.0, causal, scale, gqa);
  check_close(plain, fx(name + ".out"), 1e-12, 1e-10);
}

/// Runs fixture case `name` through an ember MHA built with `options` and loaded with PyTorch's
/// state dict, comparing output, weights and gradients.
void check_mha_case(const std::string& name, const nn::MultiheadAttentionOptions& options, bool need_weights,
                    bool average, bool is_causal, bool self_attn, bool kv_same) {
  INFO("case " << name);
  nn::MultiheadAttention m(options);
  m->to(kDouble);
  m->load_state_dict(sub_dict(name + ".sd."));
  m->eval();
  Tensor q = grad_leaf(fx(name + ".query"));
  Tensor k = self_attn ? q : grad_leaf(fx(name + ".key"));
  Tensor v = self_attn || kv_same ? k : grad_leaf(fx(name + ".value"));
  Tensor kpm = has(name + ".key_padding_mask") ? fx(name + ".key_padding_mask") : Tensor();
  Tensor amask = has(name + ".attn_mask") ? fx(name + ".attn_mask") : Tensor();
  auto [out, weights] = m->forward(q, k, v, kpm, need_weights, amask, average, is_causal);
  check_close(out, fx(name + ".out"), 1e-12, 1e-9);
  CHECK(weights.defined() == need_weights);
  if (need_weights) check_close(weights, fx(name + ".weights"), 1e-12, 1e-9);
  (out * fx(name + ".gout")).sum().backward();
  check_close(q.grad(), fx(name + ".gquery"), 1e-12, 1e-9);
  for (const auto& item : m->named_parameters()) {
    INFO("parameter " << item.key());
    REQUIRE(item.value().grad().defined());
    check_close(item.value().grad(), fx(name + ".grad." + item.key()), 1e-12, 1e-9);
  }
}

}  // namespace

TEST_CASE("test_attention: scaled_dot_product_attention equals PyTorch's, values and gradients") {
  check_sdpa_case("plain", {}, false, std::nullopt, false);
  check_sdpa_case("boolmask", fx("boolmask.mask"), false, std::nullopt, false);
  check_sdpa_case("floatmask", fx("floatmask.mask"), false, std::nullopt, false);
  check_sdpa_case("causal", {}, true, std::nullopt, false);
  check_sdpa_case("scale", {}, false, 0.3, false);
  check_sdpa_case("gqa", {}, false, std::nullopt, true);
  check_sdpa_case("bcast", {}, false, std::nullopt, false);
}

TEST_CASE("test_attention: MultiheadAttention equals PyTorch's for the same weights") {
  // Self-attention, key padding + float attn_mask, averaged weights (the weights path).
  check_mha_case("mha_self", nn::MultiheadAttentionOptions(8, 2), true, true, false, true, false);
  // batch_first, kdim/vdim, bias_kv, zero_attn, bool attn_mask, no weights (the SDPA path).
  check_mha_case(
      "mha_cross",
      nn::MultiheadAttentionOptions(8, 4).kdim(6).vdim(5).add_bias_kv(true).add_zero_attn(true).batch_first(
          true),
      false, true, false, false, false);
  // Unbatched, causal hint, no bias.
  check_mha_case("mha_causal", nn::MultiheadAttentionOptions(6, 3).bias(false), false, true, true, false,
                 false);
  // Per-head weights, float key padding mask, key is value.
  check_mha_case("mha_heads", nn::MultiheadAttentionOptions(8, 2), true, false, false, false, true);
}

TEST_CASE("test_attention: MultiheadAttention's parameters, state-dict keys and initialisation") {
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2));
  std::vector<std::string> keys;
  for (const auto& item : m->state_dict()) keys.push_back(item.key());
  CHECK(keys ==
        std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(m->in_proj_weight.sizes().equals({24, 8}));
  CHECK(m->in_proj_bias.abs().max().item<double>() == 0);
  CHECK(m->out_proj->bias.abs().max().item<double>() == 0);
  // xavier_uniform_: U(+-sqrt(6 / (fan_in + fan_out))) = U(+-sqrt(6 / 32)).
  const double bound = std::sqrt(6.0 / 32.0);
  CHECK(m->in_proj_weight.abs().max().item<double>() <= bound);
  CHECK(m->in_proj_weight.abs().max().item<double>() > 0.8 * bound);

  nn::MultiheadAttention sep(
      nn::MultiheadAttentionOptions(8, 2).kdim(3).vdim(5).add_bias_kv(true).bias(false));
  keys.clear();
  for (const auto& item : sep->state_dict()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k",
                                         "bias_v", "out_proj.weight"});
  CHECK(sep->k_proj_weight.sizes().equals({8, 3}));
  CHECK(sep->v_proj_weight.sizes().equals({8, 5}));
  CHECK(sep->bias_k.sizes().equals({1, 1, 8}));
}

TEST_CASE("test_attention: MultiheadAttention gradcheck, and its two paths agree") {
  manual_seed(7);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(6, 2).batch_first(true));
  m->to(kDouble);
  Tensor q = ember::test::rand_leaf({2, 3, 6}), k = ember::test::rand_leaf({2, 4, 6}),
         v = ember::test::rand_leaf({2, 4, 6});
  Tensor kpm = zeros({2, 4}, TensorOptions().dtype(kBool));
  kpm.select(0, 1).select(0, 3).fill_(1);
  // The inputs through the weights path, the in-projection weight through the SDPA path.
  check_grad([&](const TensorList& x) { return std::get<0>(m->forward(x[0], x[1], x[2], kpm, true)); },
             {q, k, v});
  check_grad(
      [&](const TensorList& x) {
        nn::functional::MultiheadAttentionForwardFuncOptions o(6, 2, x[1], m->in_proj_bias, {}, {}, false,
                                                               0.0, m->out_proj->weight, m->out_proj->bias);
        return std::get<0>(
            nn::functional::multi_head_attention_forward(x[0], x[0], x[0], o.need_weights(false)));
      },
      {q.transpose(0, 1).detach().requires_grad_(true), m->in_proj_weight});
  Tensor a = std::get<0>(m->forward(q, k, v, kpm, true)), b = std::get<0>(m->forward(q, k, v, kpm, false));
  check_close(a, b, 1e-12, 1e-10);
  // Dropout in training: the weights are dropped (rows no longer sum to 1); eval turns it off.
  nn::MultiheadAttention d(nn::MultiheadAttentionOptions(6, 2).dropout(0.5));
  Tensor x = randn({3, 2, 6});
  Tensor w = std::get<1>(d->forward(x, x, x, {}, true, {}, false));
  CHECK((w.sum(-1) - 1).abs().max().item<double>() > 1e-3);
  d->eval();
  w = std::get<1>(d->forward(x, x, x, {}, true, {}, false));
  check_close(w.sum(-1), ones({2, 2, 3}), 1e-5, 1e-5);
}

TEST_CASE("test_attention: MultiheadAttention error texts") {
  check_error([] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(6, 4)); },
              "embed_dim must be divisible by num_heads");
  check_error([] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(0, 4)); },
              "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=4 instead");
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(4, 2));
  Tensor x = randn({3, 2, 4});
  check_error(
      [&] {
        m->forward(randn({2, 3, 2, 4}), x, x);
      },
      "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor");
  check_error(
      [&] {
        m->forward(x, randn({3, 4}), x);
      },
      "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 3-D tensors "
      "respectively");
  check_error(
      [&] {
        m->forward(x, x, x, {}, true, zeros({3, 2}));
      },
      "The shape of the 2D attn_mask is torch.Size([3, 2]), but should be (3, 3).");
  check_error(
      [&] {
        m->forward(x, x, x, {}, true, zeros({3, 3, 3}));
      },
      "The shape of the 3D attn_mask is torch.Size([3, 3, 3]), but should be (4, 3, 3).");
  check_error([&] { m->forward(x, x, x, {}, false, {}, true, true); },
              "Need attn_mask if specifying the is_causal hint.");
  check_error(
      [&] {
        m->forward(x, x, x, zeros({2, 3}, kLong));
      },
      "only bool and floating types of key_padding_mask are supported");
  check_error(
      [&] {
        m->forward(x, randn({3, 2, 4}), randn({5, 2, 4}));
      },
      "key shape torch.Size([3, 2, 4]) does not match value shape torch.Size([5, 2, 4])");
  check_error(
      [&] {
        m->forward(randn({3, 2, 6}), randn({3, 2, 6}), randn({3, 2, 6}));
      },
      "was expecting embedding dimension of 4, but got 6");
}
