// The transformer modules against PyTorch 2.9.1 (fixtures/make_transformer_fixture.py: outputs
// and gradients for the same inputs and weights, loaded by PyTorch's state-dict keys, whose
// order must match), float64 gradchecks, initialisation, deep copies, dropout in train/eval,
// the causal mask and error texts.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/serialize.h"
#include "ember/nn/modules/transformer.h"
#include "fixtures/transformer_fixture.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::keys_of;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;

namespace {

using Dict = OrderedDict<std::string, Tensor>;

const Dict& fixture() {
  static const Dict d = deserialize_safetensors(kTransformerFixture, sizeof(kTransformerFixture));
  return d;
}

bool has(const std::string& key) { return fixture().contains(key); }

/// A fixture tensor; floats widened to float64 (the fixture stores them as float16/float32).
Tensor fx(const std::string& key) {
  INFO("fixture key " << key);
  REQUIRE(has(key));
  Tensor t = fixture()[key];
  return t.is_floating_point() ? t.to(kDouble) : t;
}

/// A fixture tensor if present, else undefined (an absent mask).
Tensor opt(const std::string& key) { return has(key) ? fx(key) : Tensor(); }

Tensor leaf(const std::string& key) { return fx(key).detach().clone().requires_grad_(true); }

/// Loads case `name`'s PyTorch state dict into m (float64, eval), first checking that m's
/// state-dict keys are PyTorch's, in PyTorch's order.
void load_case(nn::Module& m, const std::string& name) {
  const std::string prefix = name + ".sd.";
  Dict sd;
  for (const auto& item : fixture())
    if (item.key().rfind(prefix, 0) == 0)
      sd.insert(item.key().substr(prefix.size()), item.value().to(kDouble));
  CHECK(keys_of(m.state_dict()) == keys_of(sd));
  m.to(kDouble);
  m.load_state_dict(sd);
  m.eval();
}

// Outputs and gradients are stored rounded to float32: compare at that precision.
constexpr double kAtol = 1e-6, kRtol = 1e-5;

/// Backpropagates sum(out * gout) and compares output, input gradients and the parameter
/// gradients the fixture holds (every one for single layers, some for stacks).
void check_case(nn::Module& m, const std::string& name, const Tensor& out,
                const std::vector<std::pair<std::string, Tensor>>& inputs) {
  INFO("case " << name);
  check_close(out, fx(name + ".out"), kAtol, kRtol);
  (out * fx(name + ".gout")).sum().backward();
  for (const auto& [input_name, t] : inputs) {
    INFO("input " << input_name);
    check_close(t.grad(), fx(name + ".g" + input_name), kAtol, kRtol);
  }
  int checked = 0;
  for (const auto& item : m.named_parameters()) {
    const std::string key = name + ".grad." + item.key();
    if (!has(key)) continue;
    INFO("parameter " << item.key());
    REQUIRE(item.value().grad().defined());
    check_close(item.value().grad(), fx(key), kAtol, kRtol);
    ++checked;
  }
  CHECK(checked >= 6);
}

void check_encoder_layer_case(const std::string& name, const nn::TransformerEncoderLayerOptions& options,
                              bool is_causal) {
  nn::TransformerEncoderLayer m(options);
  load_case(*m, name);
  Tensor src = leaf(name + ".src");
  Tensor out = m->forward(src, opt(name + ".src_mask"), opt(name + ".src_key_padding_mask"), is_causal);
  check_case(*m, name, out, {{"src", src}});
}

void check_decoder_layer_case(const std::string& name, const nn::TransformerDecoderLayerOptions& options,
                              bool tgt_is_causal) {
  nn::TransformerDecoderLayer m(options);
  load_case(*m, name);
  Tensor tgt = leaf(name + ".tgt"), memory = leaf(name + ".memory");
  Tensor out =
      m->forward(tgt, memory, opt(name + ".tgt_mask"), opt(name + ".memory_mask"),
                 opt(name + ".tgt_key_padding_mask"), opt(name + ".memory_key_padding_mask"), tgt_is_causal);
  check_case(*m, name, out, {{"tgt", tgt}, {"memory", memory}});
}

std::vector<std::string> state_keys(const nn::Module& m) { return keys_of(m.state_dict()); }

}  // namespace

TEST_CASE("test_transformer: TransformerEncoderLayer equals PyTorch's for the same weights") {
  // Post-norm, relu, (S, N, E), boolean src_mask and key padding mask.
  check_encoder_layer_case("enc_post_relu", nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12),
                           false);
  // norm_first, gelu, batch_first, float causal mask with the is_causal hint, key padding.
  check_encoder_layer_case("enc_pre_gelu_bf",
                           nn::TransformerEncoderLayerOptions(8, 2)
                               .dim_feedforward(12)
                               .activation("gelu")
                               .norm_first(true)
                               .batch_first(true),
                           true);
  // bias=false everywhere (LayerNorm keeps only its weight), layer_norm_eps, float src_mask.
  check_encoder_layer_case(
      "enc_nobias",
      nn::TransformerEncoderLayerOptions(6, 3).dim_feedforward(10).bias(false).layer_norm_eps(1e-3), false);
}

TEST_CASE("test_transformer: TransformerDecoderLayer equals PyTorch's for the same weights") {
  check_decoder_layer_case("dec_post", nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(12), false);
  check_decoder_layer_case("dec_pre_gelu_bf",
                           nn::TransformerDecoderLayerOptions(8, 4)
                               .dim_feedforward(12)
                               .activation(kGELU)
                               .norm_first(true)
                               .batch_first(true),
                           true);
}

TEST_CASE("test_transformer: TransformerEncoder / TransformerDecoder stacks equal PyTorch's") {
  nn::TransformerEncoder enc(
      nn::TransformerEncoderOptions(
          nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12)), 2)
          .norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  load_case(*enc, "encoder");
  Tensor src = leaf("encoder.src");
  // The causal mask is detected (is_causal unset), as PyTorch's encoder does.
  Tensor out = enc->forward(src, fx("encoder.mask"), fx("encoder.src_key_padding_mask"));
  check_case(*enc, "encoder", out, {{"src", src}});

  nn::TransformerDecoder dec(
      nn::TransformerDecoderOptions(
          nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(12).batch_first(true), 2)
          .norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  load_case(*dec, "decoder");
  Tensor tgt = leaf("decoder.tgt"), memory = leaf("decoder.memory");
  out = dec->forward(tgt, memory, fx("decoder.tgt_mask"));
  check_case(*dec, "decoder", out, {{"tgt", tgt}, {"memory", memory}});
}

TEST_CASE("test_transformer: a small Transformer equals PyTorch's in eval mode") {
  nn::Transformer model(nn::TransformerOptions(16, 2, 2, 2).dim_feedforward(32));
  load_case(*model, "transformer");
  Tensor src = leaf("transformer.src"), tgt = leaf("transformer.tgt");
  Tensor out =
      model->forward(src, tgt, {}, fx("transformer.tgt_mask"), {}, fx("transformer.src_key_padding_mask"), {},
                     fx("transformer.memory_key_padding_mask"));
  check_case(*model, "transformer", out, {{"src", src}, {"tgt", tgt}});
}

TEST_CASE("test_transformer: gradcheck of tiny layers in float64") {
  manual_seed(3);
  nn::TransformerEncoderLayer enc(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0));
  enc->to(kDouble);
  Tensor kpm = zeros({2, 3}, TensorOptions().dtype(kBool));
  kpm.select(0, 1).select(0, 2).fill_(1);
  Tensor mask = randn({3, 3}, kDouble);
  check_grad([&](const TensorList& x) { return enc->forward(x[0], mask, kpm); },
             {ember::test::rand_leaf({3, 2, 4})});
  // Parameters too: the first linear's weight and the second norm's weight, norm_first + gelu.
  nn::TransformerEncoderLayer pre(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).norm_first(true).activation(
          "gelu"));
  pre->to(kDouble);
  check_grad([&](const TensorList& x) { return pre->forward(x[0]); },
             {ember::test::rand_leaf({3, 2, 4}), pre->linear1->weight, pre->norm2->weight});
  nn::TransformerDecoderLayer dec(nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0));
  dec->to(kDouble);
  Tensor causal = nn::TransformerImpl::generate_square_subsequent_mask(3, kDouble);
  check_grad([&](const TensorList& x) { return dec->forward(x[0], x[1], causal); },
             {ember::test::rand_leaf({3, 2, 4}), ember::test::rand_leaf({5, 2, 4})});
}

TEST_CASE("test_transformer: submodules, state-dict keys and PyTorch's initialisation") {
  nn::TransformerEncoderLayer enc(8, 2);
  CHECK(state_keys(*enc) == std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                                     "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                                                     "linear1.weight", "linear1.bias", "linear2.weight",
                                                     "linear2.bias", "norm1.weight", "norm1.bias",
                                                     "norm2.weight", "norm2.bias"});
  std::vector<std::string> children;
  for (const auto& item : enc->named_children()) children.push_back(item.key());
  CHECK(children == std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
                                             "dropout1", "dropout2"});
  // PyTorch's defaults.
  CHECK(enc->options.dim_feedforward() == 2048);
  CHECK(enc->options.dropout() == 0.1);
  CHECK(enc->options.layer_norm_eps() == 1e-5);
  CHECK(std::holds_alternative<enumtype::kReLU>(enc->options.activation()));
  CHECK_FALSE(enc->options.batch_first());
  CHECK_FALSE(enc->options.norm_first());
  CHECK(enc->linear1->weight.sizes().equals({2048, 8}));
  CHECK(enc->dropout->options.p() == 0.1);
  // A layer alone keeps Linear's init: U(+-1/sqrt(fan_in)).
  CHECK(enc->linear1->weight.abs().max().item<double>() <= 1.0 / std::sqrt(8.0));

  nn::TransformerDecoderLayer dec(8, 2);
  children.clear();
  for (const auto& item : dec->named_children()) children.push_back(item.key());
  CHECK(children == std::vector<std::string>{"self_attn", "multihead_attn", "linear1", "dropout", "linear2",
                                             "norm1", "norm2", "norm3", "dropout1", "dropout2", "dropout3"});

  nn::Transformer t;
  CHECK(t->options.d_model() == 512);
  CHECK(t->options.nhead() == 8);
  CHECK(t->encoder->layers->size() == 6);
  CHECK(t->decoder->layers->size() == 6);
  nn::Transformer small(nn::TransformerOptions(16, 2, 2, 2).dim_feedforward(32));
  // _reset_parameters: xavier_uniform_ on every matrix, U(+-sqrt(6 / (fan_in + fan_out))); for
  // linear1 (32 x 16) that bound (0.354) is past Linear's own (0.25), so the max tells them apart.
  Tensor w = small->encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(1)->linear1->weight;
  const double bound = std::sqrt(6.0 / 48.0);
  CHECK(w.abs().max().item<double>() <= bound);
  CHECK(w.abs().max().item<double>() > 0.26);
  // Vectors keep their init: LayerNorm weights 1, attention biases 0.
  CHECK(small->decoder->norm.get<nn::LayerNormImpl>().weight.eq(1).all().item<bool>());
  CHECK(small->encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(0)
            ->self_attn->in_proj_bias.abs()
            .max()
            .item<double>() == 0);
  std::vector<std::string> keys = state_keys(*small);
  CHECK(keys.front() == "encoder.layers.0.self_attn.in_proj_weight");
  CHECK(keys.back() == "decoder.norm.bias");
}

TEST_CASE("test_transformer: the stacks hold independent deep copies of the layer") {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6));
  nn::TransformerEncoder enc(layer, 2);
  auto l0 = enc->layers->ptr<nn::TransformerEncoderLayerImpl>(0);
  auto l1 = enc->layers->ptr<nn::TransformerEncoderLayerImpl>(1);
  // Copies of the same layer: equal values (as Python's deepcopy), separate storage.
  check_close(l0->linear1->weight, layer->linear1->weight, 0, 0);
  check_close(l1->self_attn->in_proj_weight, layer->self_attn->in_proj_weight, 0, 0);
  {
    NoGradGuard no_grad;
    l0->linear1->weight.fill_(7);
  }
  CHECK(l1->linear1->weight.ne(7).all().item<bool>());
  CHECK(layer->linear1->weight.ne(7).all().item<bool>());
  CHECK(state_keys(*enc).size() == 24);

  // A clone of a whole Transformer computes the same and shares nothing.
  manual_seed(1);
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(8).dropout(0.0));
  auto copy = std::dynamic_pointer_cast<nn::TransformerImpl>(t->clone());
  REQUIRE(copy != nullptr);
  Tensor src = randn({4, 2, 8}), tgt = randn({3, 2, 8});
  check_close(copy->forward(src, tgt), t->forward(src, tgt), 0, 0);
  {
    NoGradGuard no_grad;
    copy->decoder->norm.get<nn::LayerNormImpl>().weight.fill_(3);
  }
  CHECK(t->decoder->norm.get<nn::LayerNormImpl>().weight.eq(1).all().item<bool>());
}

TEST_CASE("test_transformer: dropout changes outputs in training, not in eval; callable activations") {
  manual_seed(5);
  nn::TransformerEncoderLayer enc(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.5));
  Tensor x = randn({5, 3, 8});
  Tensor a = enc->forward(x), b = enc->forward(x);
  CHECK((a - b).abs().max().item<double>() > 1e-3);
  enc->eval();
  Tensor c = enc->forward(x), d = enc->forward(x);
  check_close(c, d, 0, 0);
  CHECK((a - c).abs().max().item<double>() > 1e-3);

  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).dropout(0.5));
  Tensor src = randn({4, 2, 8}), tgt = randn({3, 2, 8});
  CHECK((t->forward(src, tgt) - t->forward(src, tgt)).abs().max().item<double>() > 1e-3);
  t->eval();
  check_close(t->forward(src, tgt), t->forward(src, tgt), 0, 0);

  // A callable activation computes as the named one does.
  nn::TransformerEncoderLayer named(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).activation("gelu"));
  named->eval();
  auto opts = nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16);
  opts.activation([](const Tensor& v) { return ember::gelu(v); });
  nn::TransformerEncoderLayer callable(opts);
  callable->load_state_dict(named->state_dict());
  callable->eval();
  check_close(callable->forward(x), named->forward(x), 0, 0);
}

TEST_CASE("test_transformer: generate_square_subsequent_mask") {
  Tensor m = nn::TransformerImpl::generate_square_subsequent_mask(3);
  CHECK(m.dtype() == kFloat);
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(ember::test::values(m) == std::vector<double>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0});
  CHECK(nn::TransformerImpl::generate_square_subsequent_mask(2, kDouble).dtype() == kDouble);
}

TEST_CASE("test_transformer: error texts") {
  check_error([] { nn::TransformerEncoderLayerOptions(8, 2).activation("tanh"); },
              "activation should be relu/gelu, not tanh");
  check_error([] { nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(6, 4)); },
              "embed_dim must be divisible by num_heads");
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(8));
  check_error(
      [&] {
        t->forward(randn({4, 2, 8}), randn({3, 3, 8}));
      },
      "the batch number of src and tgt must be equal");
  check_error(
      [&] {
        t->forward(randn({4, 2, 6}), randn({3, 2, 6}));
      },
      "the feature number of src and tgt must be equal to d_model");
  nn::Transformer bf(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(8).batch_first(true));
  check_error(
      [&] {
        bf->forward(randn({2, 4, 8}), randn({3, 4, 8}));
      },
      "the batch number of src and tgt must be equal");
  nn::TransformerEncoderLayer enc(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(8));
  check_error([&] { enc->forward(randn({4, 2, 6})); }, "was expecting embedding dimension of 8, but got 6");
  check_error(
      [&] {
        enc->forward(randn({4, 2, 8}), {}, zeros({2, 4}, kLong));
      },
      "only bool and floating types of src_key_padding_mask are supported");
  check_error(
      [&] {
        enc->forward(randn({4, 2, 8}), {}, {}, true);
      },
      "Need attn_mask if specifying the is_causal hint.");
}

TEST_CASE("test_transformer: unbatched inputs and custom coders") {
  manual_seed(11);
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(8));
  t->eval();
  Tensor src = randn({4, 8}), tgt = randn({3, 8});
  // (S, E) computes as (S, 1, E) does.
  check_close(t->forward(src, tgt), t->forward(src.unsqueeze(1), tgt.unsqueeze(1)).squeeze(1), 1e-6, 1e-5);

  // custom_encoder / custom_decoder: copies of the given coders, then xavier_uniform_ as PyTorch's.
  nn::TransformerEncoder enc(
      nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(8)), 3);
  nn::TransformerDecoder dec(
      nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(8)), 1);
  nn::Transformer custom(nn::TransformerOptions(8, 2).custom_encoder(enc.ptr()).custom_decoder(dec.ptr()));
  CHECK(custom->encoder->layers->size() == 3);
  CHECK(custom->decoder->layers->size() == 1);
  CHECK(custom->encoder->norm.is_empty());
  CHECK(state_keys(*custom).size() == state_keys(*enc).size() + state_keys(*dec).size());
  CHECK(custom->encoder.ptr() != enc.ptr());
}
