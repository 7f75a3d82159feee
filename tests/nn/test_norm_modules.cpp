// BatchNorm1d/2d, LayerNorm, GroupNorm, Dropout*, Embedding modules and their functional
// forms: train/eval behaviour, running statistics and num_batches_tracked against hand
// computation, momentum = None, parameter/buffer names, PyTorch's init and reprs, errors.
#include <cmath>
#include <sstream>

#include "ember/nn/functional/batchnorm.h"
#include "ember/nn/functional/dropout.h"
#include "ember/nn/functional/embedding.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/normalization.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::repr;
using ember::test::keys_of;
namespace F = ember::nn::functional;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::longs;
using ember::test::shape;
using ember::test::values;

namespace {

/// Per-channel mean and unbiased variance of an (N, C, *) tensor.
std::pair<std::vector<double>, std::vector<double>> channel_stats(const Tensor& x) {
  Tensor xc = x.transpose(0, 1).reshape({x.size(1), -1});
  return {values(xc.mean({1})), values(xc.var({1}))};
}

Tensor as_tensor(const std::vector<double>& v) {
  return ember::test::from_values(v, {static_cast<int64_t>(v.size())});
}

}  // namespace

TEST_CASE("test_norm_modules: BatchNorm2d parameters, buffers and state_dict keys") {
  nn::BatchNorm2d bn(3);
  CHECK(keys_of(bn->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(keys_of(bn->named_buffers()) ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  CHECK(keys_of(bn->state_dict()) ==
        std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  check_close(bn->weight, {1, 1, 1});
  check_close(bn->bias, {0, 0, 0});
  check_close(bn->running_mean, {0, 0, 0});
  check_close(bn->running_var, {1, 1, 1});
  CHECK(bn->num_batches_tracked.dtype() == kLong);
  CHECK(bn->num_batches_tracked.dim() == 0);
  CHECK(bn->weight.requires_grad());
  CHECK_FALSE(bn->running_mean.requires_grad());
  CHECK(repr(*bn) == "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");

  nn::BatchNorm1d plain(
      nn::BatchNorm1dOptions(4).affine(false).track_running_stats(false).momentum(std::nullopt));
  CHECK(plain->parameters().empty());
  CHECK(plain->buffers().empty());
  CHECK(plain->state_dict().is_empty());
  CHECK(repr(*plain) == "BatchNorm1d(4, eps=1e-05, momentum=None, affine=False, track_running_stats=False)");
  CHECK(repr(*nn::BatchNorm2d(nn::BatchNorm2dOptions(32).eps(1e-3).momentum(0.01))) ==
        "BatchNorm2d(32, eps=0.001, momentum=0.01, affine=True, track_running_stats=True)");
}

TEST_CASE("test_norm_modules: BatchNorm2d training updates running stats; eval uses them") {
  manual_seed(11);
  nn::BatchNorm2d bn(2);
  Tensor x1 = randn({4, 2, 3, 3}) * 2 + 5;
  Tensor y = bn->forward(x1);
  auto [m1, v1] = channel_stats(x1);
  // running = 0.9 * initial + 0.1 * batch (variance unbiased).
  check_close(bn->running_mean, {0.1 * m1[0], 0.1 * m1[1]}, 1e-5);
  check_close(bn->running_var, {0.9 + 0.1 * v1[0], 0.9 + 0.1 * v1[1]}, 1e-5);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 1);
  // Training output has zero mean and (biased) unit variance per channel.
  auto [ym, yv] = channel_stats(y);
  check_close(as_tensor(ym), {0, 0}, 1e-5);
  Tensor x2 = randn({4, 2, 3, 3});
  bn->forward(x2);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);

  bn->eval();
  std::vector<double> rm = values(bn->running_mean), rv = values(bn->running_var);
  Tensor x3 = randn({2, 2, 2, 2});
  {
    NoGradGuard g;
    bn->weight.fill_(2);
    bn->bias.fill_(0.5);
  }
  Tensor out = bn->forward(x3);
  std::vector<double> xv = values(x3), expected;
  for (size_t i = 0; i < xv.size(); ++i) {
    size_t c = (i / 4) % 2;
    expected.push_back((xv[i] - rm[c]) / std::sqrt(rv[c] + 1e-5) * 2 + 0.5);
  }
  check_close(out, expected, 1e-5);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);  // not counted in eval
  check_close(bn->running_mean, rm);
}

TEST_CASE("test_norm_modules: momentum None keeps a cumulative average") {
  manual_seed(12);
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(3).momentum(std::nullopt));
  Tensor a = randn({5, 3}), b = randn({5, 3}) + 1;
  bn->forward(a);
  bn->forward(b);
  // Factor 1/1 then 1/2: the running stats are the plain average of the two batches'.
  auto [ma, va] = channel_stats(a);
  auto [mb, vb] = channel_stats(b);
  check_close(bn->running_mean, {(ma[0] + mb[0]) / 2, (ma[1] + mb[1]) / 2, (ma[2] + mb[2]) / 2}, 1e-5);
  check_close(bn->running_var, {(va[0] + vb[0]) / 2, (va[1] + vb[1]) / 2, (va[2] + vb[2]) / 2}, 1e-5);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);
}

TEST_CASE("test_norm_modules: BatchNorm without running stats normalises with the batch in eval") {
  manual_seed(13);
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(2).track_running_stats(false));
  bn->eval();
  Tensor x = randn({6, 2, 4});  // 3-d input: (N, C, L)
  Tensor y = bn->forward(x);
  auto [m, v] = channel_stats(y);
  check_close(as_tensor(m), {0, 0}, 1e-5);
  // Biased variance 1: unbiased (n / (n - 1)) with n = 24.
  check_close(as_tensor(v), {24.0 / 23, 24.0 / 23}, 1e-3);
}

TEST_CASE("test_norm_modules: BatchNorm input checks and clone") {
  nn::BatchNorm1d bn1(3);
  nn::BatchNorm2d bn2(3);
  check_error([&] { bn1->forward(ones({2, 3, 4, 4})); }, "expected 2D or 3D input (got 4D input)");
  check_error([&] { bn2->forward(ones({2, 3})); }, "expected 4D input (got 2D input)");
  check_error(
      [&] {
        bn1->forward(ones({1, 3}));
      },
      "Expected more than 1 value per channel when training, got input size [1, 3]");
  bn1->eval();
  CHECK(bn1->forward(ones({1, 3})).sizes().vec() == std::vector<int64_t>{1, 3});  // fine in eval

  auto copy = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(bn2->clone());
  copy->forward(ember::randn({2, 3, 2, 2}));
  CHECK(copy->num_batches_tracked.item<int64_t>() == 1);
  CHECK(bn2->num_batches_tracked.item<int64_t>() == 0);
  check_close(bn2->running_mean, {0, 0, 0});
}

TEST_CASE("test_norm_modules: F::batch_norm with options") {
  Tensor x = tensor({{1.0, 10.0}, {3.0, 30.0}}, kDouble);
  Tensor rm = zeros({2}, kDouble), rv = ones({2}, kDouble);
  Tensor y = F::batch_norm(
      x, rm, rv, F::BatchNormFuncOptions().weight(tensor({2.0, 1.0}, kDouble)).training(true).momentum(0.5));
  double s = 1 / std::sqrt(1 + 1e-5);
  check_close(y, {-2 * s, -s, 2 * s, s});
  check_close(rm, {1, 10});
  check_close(rv, {0.5 + 0.5 * 2, 0.5 + 0.5 * 200});
  // Evaluation (the default): running statistics.
  check_close(F::batch_norm(x, rm, rv), {0, 0, 2 / std::sqrt(1.5 + 1e-5), 20 / std::sqrt(100.5 + 1e-5)},
              1e-6);
}

TEST_CASE("test_norm_modules: LayerNorm and GroupNorm modules") {
  manual_seed(14);
  nn::LayerNorm ln(std::vector<int64_t>{4});
  CHECK(repr(*ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  CHECK(keys_of(ln->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  check_close(ln->weight, {1, 1, 1, 1});
  Tensor x = randn({3, 4});
  {
    NoGradGuard g;
    ln->weight.copy_(tensor({1.0, 2.0, 3.0, 4.0}));
  }
  check_close(ln->forward(x),
              F::layer_norm(x, F::LayerNormFuncOptions({4}).weight(ln->weight).bias(ln->bias)));
  nn::LayerNorm ln2(nn::LayerNormOptions({2, 3}).elementwise_affine(false).eps(1e-6));
  CHECK(repr(*ln2) == "LayerNorm((2, 3), eps=1e-06, elementwise_affine=False)");
  CHECK(ln2->parameters().empty());
  Tensor z = ln2->forward(randn({5, 2, 3}));
  check_close(z.reshape({5, 6}).mean({1}), std::vector<double>(5, 0.0), 1e-5);

  nn::GroupNorm gn(2, 4);
  CHECK(repr(*gn) == "GroupNorm(2, 4, eps=1e-05, affine=True)");
  CHECK(shape(gn->weight) == std::vector<int64_t>{4});
  Tensor xg = randn({2, 4, 3});
  check_close(gn->forward(xg),
              F::group_norm(xg, F::GroupNormFuncOptions(2).weight(gn->weight).bias(gn->bias)));
  Tensor yg = gn->forward(xg).reshape({4, 6});  // rows (n, group)
  check_close(yg.mean({1}), std::vector<double>(4, 0.0), 1e-5);
  check_error(
      [&] {
        gn->forward(ones({2, 6, 4}));
      },
      "Expected weight to be a vector of size equal to the number of channels");
  CHECK(nn::GroupNorm(nn::GroupNormOptions(1, 3).affine(false))->parameters().empty());
}

TEST_CASE("test_norm_modules: F::normalize") {
  // Rows (3, 4) and (0, 0): divided by their 2-norms 5 and max(0, eps).
  Tensor x = tensor({{3.0, 4.0}, {0.0, 0.0}}, kDouble);
  check_close(F::normalize(x), {0.6, 0.8, 0, 0});
  check_close(F::normalize(x, F::NormalizeFuncOptions().p(1).dim(0)), {1, 1, 0, 0});
  Tensor out = empty({2, 2}, kDouble);
  F::normalize(x, F::NormalizeFuncOptions().out(out));
  check_close(out, {0.6, 0.8, 0, 0});
  ember::test::check_grad([](const TensorList& t) { return F::normalize(t[0]); },
                          {ember::test::rand_leaf({3, 4})});
}

TEST_CASE("test_norm_modules: Dropout modules respect is_training") {
  manual_seed(15);
  nn::Dropout drop(0.5);
  CHECK(repr(*drop) == "Dropout(p=0.5, inplace=False)");
  Tensor x = ones({1000});
  Tensor y = drop->forward(x);
  std::vector<double> v = values(y);
  int64_t zeros_seen = 0;
  for (double e : v) zeros_seen += e == 0;
  CHECK(zeros_seen > 400);
  CHECK(zeros_seen < 600);
  drop->eval();
  CHECK(drop->forward(x).is_same(x));

  nn::Dropout2d d2(nn::Dropout2dOptions(0.2).inplace(true));
  CHECK(repr(*d2) == "Dropout2d(p=0.2, inplace=True)");
  // A 3-d input is one unbatched (C, H, W) sample: whole (H, W) planes drop.
  Tensor u = ones({8, 3, 3});
  d2->forward(u);  // in place
  for (int64_t c = 0; c < 8; ++c) {
    std::vector<double> plane = values(u[c]);
    for (double e : plane) CHECK(e == plane[0]);
  }
  CHECK(repr(*nn::AlphaDropout(0.3)) == "AlphaDropout(p=0.3, inplace=False)");
  CHECK(repr(*nn::Dropout1d()) == "Dropout1d(p=0.5, inplace=False)");
  check_error([] { nn::Dropout(1.5); }, "dropout probability has to be between 0 and 1, but got 1.5");
  check_error([] { F::dropout(ones({2}), F::DropoutFuncOptions().p(-1)); },
              "dropout probability has to be between 0 and 1");
  // Functional: training defaults to true for dropout, false for alpha_dropout.
  Tensor w = ones({100});
  CHECK_FALSE(F::dropout(w).is_same(w));
  CHECK(F::alpha_dropout(w).is_same(w));
  CHECK(F::dropout(w, F::DropoutFuncOptions().training(false)).is_same(w));
}

TEST_CASE("test_norm_modules: Embedding module") {
  manual_seed(16);
  nn::Embedding emb(nn::EmbeddingOptions(10, 3).padding_idx(-1));
  CHECK(*emb->options.padding_idx() == 9);  // wrapped
  CHECK(repr(*emb) == "Embedding(10, 3, padding_idx=9)");
  CHECK(shape(emb->weight) == std::vector<int64_t>{10, 3});
  check_close(emb->weight[9], {0, 0, 0});
  CHECK(std::fabs(emb->weight.narrow(0, 0, 9).std().item<double>() - 1) < 0.6);  // N(0, 1) draws
  Tensor idx = tensor({{1, 9}, {1, 2}});
  Tensor out = emb->forward(idx);
  CHECK(shape(out) == std::vector<int64_t>{2, 2, 3});
  check_close(out[0][0], values(emb->weight[1]));
  out.sum().backward();
  // Row 1 is used twice; the padding row gets nothing; unused rows zero.
  check_close(emb->weight.grad()[1], {2, 2, 2});
  check_close(emb->weight.grad()[9], {0, 0, 0});
  check_close(emb->weight.grad()[2], {1, 1, 1});
  check_close(emb->weight.grad()[0], {0, 0, 0});

  CHECK(repr(*nn::Embedding(10, 3)) == "Embedding(10, 3)");
  CHECK(repr(*nn::Embedding(nn::EmbeddingOptions(10, 3).max_norm(2.0).scale_grad_by_freq(true).sparse(
            true))) == "Embedding(10, 3, max_norm=2.0, scale_grad_by_freq=True, sparse=True)");
  check_error([] { nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)); },
              "Padding_idx must be within num_embeddings");

  Tensor table = tensor({{1.0, 2.0}, {3.0, 4.0}});
  nn::Embedding pre = nn::Embedding::from_pretrained(table);
  CHECK_FALSE(pre->weight.requires_grad());
  check_close(pre->forward(longs({1, 0})), {3, 4, 1, 2});
  CHECK(nn::Embedding::from_pretrained(table, nn::EmbeddingFromPretrainedOptions().freeze(false))
            ->weight.requires_grad());
}

TEST_CASE("test_norm_modules: F::embedding and F::one_hot") {
  Tensor w = tensor({{3.0, 4.0}, {0.3, 0.4}, {1.0, 0.0}}, kDouble).requires_grad_(true);
  Tensor y = F::embedding(longs({0, 2, 2}), w, F::EmbeddingFuncOptions().padding_idx(-1));  // padding row 2
  y.sum().backward();
  check_close(w.grad(), {1, 1, 0, 0, 0, 0});
  // max_norm renormalises the looked-up rows of the weight in place (row 0 has norm 5).
  Tensor w2 = tensor({{3.0, 4.0}, {0.3, 0.4}}, kDouble);
  check_close(F::embedding(longs({0}), w2, F::EmbeddingFuncOptions().max_norm(1.0)), {0.6, 0.8}, 1e-6);
  check_close(w2[0], {0.6, 0.8}, 1e-6);
  check_close(F::one_hot(longs({1, 0}), 3), {0, 1, 0, 1, 0, 0});
}
