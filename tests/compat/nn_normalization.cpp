// Normalization, dropout and embedding layers: a small CNN with BatchNorm2d and Dropout
// trained one step (running statistics after train-mode forwards, eval-mode outputs),
// BatchNorm1d/LayerNorm/GroupNorm with their options, Dropout's identity cases, Embedding with
// padding_idx and from_pretrained, and the F:: forms. No random numbers are involved: weights
// come from sin(arange) and dropout is only run where it keeps everything.
#include "compat.h"

namespace nn = torch::nn;
namespace F = torch::nn::functional;
using compat::show;
using compat::show_flag;
using compat::show_int;
using compat::show_ints;

// Deterministic values of a given shape: scale * sin(0.7 * i + phase).
torch::Tensor wave(torch::IntArrayRef sizes, double phase, double scale = 0.5) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return (torch::sin(torch::arange(n, torch::kFloat) * 0.7 + phase) * scale).reshape(sizes);
}

void set_parameters(nn::Module& module, double phase = 0.5) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    p.copy_(wave(p.sizes(), phase));
    phase += 1.0;
  }
}

struct CnnImpl : nn::Module {
  CnnImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)));
    bn = register_module("bn", nn::BatchNorm2d(nn::BatchNorm2dOptions(4).momentum(0.2)));
    pool = register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(2)));
    drop = register_module("drop", nn::Dropout(nn::DropoutOptions(0.5)));
    fc = register_module("fc", nn::Linear(16, 3));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = pool(torch::relu(bn(conv(x))));
    return fc(drop(x.flatten(1)));
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::MaxPool2d pool{nullptr};
  nn::Dropout drop{nullptr};
  nn::Linear fc{nullptr};
};
TORCH_MODULE(Cnn);

void cnn() {
  Cnn net;
  set_parameters(*net);
  for (const auto& item : net->named_parameters()) show_ints(item.key().c_str(), item.value().sizes());
  for (const auto& item : net->named_buffers()) show(item.key().c_str(), item.value());

  auto x = wave({3, 1, 4, 4}, 0.3, 1.0);
  auto labels = torch::tensor({0, 2, 1}, torch::kLong);
  // Train mode (batch statistics) for everything but the dropout, whose mask is random.
  net->drop->eval();
  auto out = net(x);
  show("train_forward", out);
  auto loss = F::cross_entropy(out, labels);
  show("train_loss", loss);
  loss.backward();
  for (const auto& item : net->named_parameters()) show((item.key() + "_grad").c_str(), item.value().grad());
  show("bn_running_mean", net->bn->running_mean);
  show("bn_running_var", net->bn->running_var);
  show("bn_num_batches_tracked", net->bn->num_batches_tracked);
  net(x * 2 + 0.1);
  show("bn_running_mean_2", net->bn->running_mean);
  show("bn_running_var_2", net->bn->running_var);
  show("bn_num_batches_tracked_2", net->bn->num_batches_tracked);

  net->eval();
  show_flag("eval_bn_training", net->bn->is_training());
  show_flag("eval_drop_training", net->drop->is_training());
  show("eval_forward", net(x));
}

void batch_norms() {
  auto x = wave({5, 3}, 0.2, 2.0);
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(3).eps(1e-3).momentum(0.5));
  set_parameters(*bn);
  show("batch_norm1d_train", bn(x));
  show("batch_norm1d_running_mean", bn->running_mean);
  show("batch_norm1d_running_var", bn->running_var);
  bn->eval();
  show("batch_norm1d_eval", bn(x));

  nn::BatchNorm1d plain(nn::BatchNorm1dOptions(3).affine(false));
  show_int("batch_norm1d_no_affine_params", static_cast<int64_t>(plain->parameters().size()));
  show("batch_norm1d_no_affine", plain(x));
  show("batch_norm1d_3d", plain(wave({2, 3, 4}, 1.0, 1.0)));

  nn::BatchNorm2d shorthand(2);
  show("batch_norm2d_shorthand", shorthand(wave({2, 2, 2, 2}, 0.3, 1.0)));
  nn::GroupNorm group_shorthand(1, 2);
  show("group_norm_shorthand", group_shorthand(wave({2, 2, 3}, 0.3, 1.0)));

  nn::BatchNorm2d untracked(nn::BatchNorm2dOptions(2).track_running_stats(false));
  show_int("batch_norm2d_untracked_buffers", static_cast<int64_t>(untracked->buffers().size()));
  untracked->eval();
  show("batch_norm2d_untracked_eval", untracked(wave({2, 2, 2, 2}, 0.7, 1.0)));

  // Gradient of a train-mode batch norm with respect to its input.
  auto leaf = x.detach().requires_grad_(true);
  nn::BatchNorm1d graded(3);
  set_parameters(*graded, 1.5);
  (graded(leaf) * wave({5, 3}, 2.0)).sum().backward();
  show("batch_norm1d_input_grad", leaf.grad());
  show("batch_norm1d_weight_grad", graded->weight.grad());
  show("batch_norm1d_bias_grad", graded->bias.grad());

  auto mean = torch::tensor({0.1f, -0.2f, 0.3f}), var = torch::tensor({1.0f, 0.5f, 2.0f});
  show("F_batch_norm_eval", F::batch_norm(x, mean, var, F::BatchNormFuncOptions().weight(torch::ones({3}) * 2)
                                                           .bias(torch::full({3}, 0.5))
                                                           .eps(1e-4)));
}

void layer_norms() {
  auto x = wave({2, 3, 4}, 0.4, 1.5);
  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  set_parameters(*ln);
  show("layer_norm", ln(x));
  nn::LayerNorm ln2(nn::LayerNormOptions({3, 4}).elementwise_affine(false).eps(1e-3));
  show_int("layer_norm_no_affine_params", static_cast<int64_t>(ln2->parameters().size()));
  show("layer_norm_2d", ln2(x));
  show("F_layer_norm", F::layer_norm(x, F::LayerNormFuncOptions({4}).weight(wave({4}, 1.0)).bias(wave({4}, 2.0))));

  nn::GroupNorm gn(nn::GroupNormOptions(2, 4));
  set_parameters(*gn);
  auto g = wave({2, 4, 3}, 0.8, 1.0);
  show("group_norm", gn(g));
  show("F_group_norm", F::group_norm(g, F::GroupNormFuncOptions(4).eps(1e-3)));

  auto leaf = x.detach().requires_grad_(true);
  (ln(leaf) * wave({2, 3, 4}, 1.2)).sum().backward();
  show("layer_norm_input_grad", leaf.grad());
  show("layer_norm_weight_grad", ln->weight.grad());

  show("F_normalize", F::normalize(x, F::NormalizeFuncOptions().dim(2)));
  show("F_normalize_p1", F::normalize(x, F::NormalizeFuncOptions().p(1).dim(0)));
}

void dropouts() {
  auto x = wave({2, 5}, 0.1, 1.0);
  nn::Dropout drop(nn::DropoutOptions(0.3));
  drop->eval();
  show("dropout_eval", drop(x));
  nn::Dropout keep(nn::DropoutOptions(0.0));
  show("dropout_p0_train", keep(x));
  show("F_dropout_eval", F::dropout(x, F::DropoutFuncOptions().p(0.4).training(false)));
  show("F_dropout_p0", F::dropout(x, F::DropoutFuncOptions().p(0.0)));
  // p = 1 zeroes everything (no randomness involved).
  show("F_dropout_p1", F::dropout(x, F::DropoutFuncOptions().p(1.0)));
}

void embeddings() {
  nn::Embedding emb(nn::EmbeddingOptions(6, 3).padding_idx(0));
  set_parameters(*emb);
  auto idx = torch::tensor({{1, 0, 5}, {2, 2, 3}}, torch::kLong);
  auto out = emb(idx);
  show("embedding", out);
  (out * wave({2, 3, 3}, 0.4)).sum().backward();
  show("embedding_weight_grad", emb->weight.grad());

  nn::Embedding plain(5, 2);
  set_parameters(*plain);
  show("embedding_shorthand", plain(torch::tensor({4, 0, 2}, torch::kLong)));

  auto table = wave({4, 2}, 0.9, 1.0);
  auto pretrained = nn::Embedding::from_pretrained(table);
  show_flag("from_pretrained_requires_grad", pretrained->weight.requires_grad());
  show("from_pretrained", pretrained(torch::tensor({3, 0, 3}, torch::kLong)));
  auto trainable = nn::Embedding::from_pretrained(table, nn::EmbeddingFromPretrainedOptions().freeze(false));
  show_flag("from_pretrained_unfrozen_requires_grad", trainable->weight.requires_grad());
  show("F_embedding", F::embedding(torch::tensor({1, 1, 2}, torch::kLong), table));
  show("F_one_hot", F::one_hot(torch::tensor({0, 3, 1}, torch::kLong), 4));
  show("F_one_hot_inferred", F::one_hot(torch::tensor({{2, 0}, {1, 2}}, torch::kLong)));
}

int main() {
  cnn();
  batch_norms();
  layer_norms();
  dropouts();
  embeddings();
}
