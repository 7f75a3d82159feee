// AdaptiveLogSoftmaxWithLoss (nn/modules/adaptive.h): parameter names and shapes as
// PyTorch's, the printed tree, forward/log_prob/predict against PyTorch's numbers with the
// same deterministic weights (tests/nn/fixtures/make_loss_fixture.py), forward's output
// against log_prob gathered at the targets, float64 gradcheck, and PyTorch's error texts.
#include <cmath>
#include <sstream>

#include "ember/nn/modules/adaptive.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::longs;
using ember::test::repr;
using ember::test::values;

namespace {

/// The fixture's module: parameter k (named_parameters order) = 0.5 sin(0.37 i + k).
nn::AdaptiveLogSoftmaxWithLoss fixture_module() {
  nn::AdaptiveLogSoftmaxWithLoss asm_(nn::AdaptiveLogSoftmaxWithLossOptions(16, 10, {4, 8}).head_bias(true));
  asm_->to(kDouble);
  NoGradGuard no_grad;
  int k = 0;
  for (auto& item : asm_->named_parameters()) {
    Tensor& p = item.value();
    p.copy_((arange(p.numel(), kDouble) * 0.37 + k).sin().mul(0.5).view(p.sizes()));
    ++k;
  }
  return asm_;
}

/// Row r = cos(0.3 j + r), j < 16.
Tensor fixture_input() {
  return (arange(16, kDouble).unsqueeze(0) * 0.3 + arange(5, kDouble).unsqueeze(1)).cos();
}

}  // namespace

TEST_CASE("AdaptiveLogSoftmaxWithLoss: PyTorch's parameter names, shapes and printed tree") {
  nn::AdaptiveLogSoftmaxWithLoss m(nn::AdaptiveLogSoftmaxWithLossOptions(16, 10, {4, 8}).head_bias(true));
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  for (auto& item : m->named_parameters()) {
    names.push_back(item.key());
    shapes.push_back(item.value().sizes().vec());
  }
  CHECK(names == std::vector<std::string>{"head.weight", "head.bias", "tail.0.0.weight", "tail.0.1.weight",
                                          "tail.1.0.weight", "tail.1.1.weight"});
  CHECK(shapes == std::vector<std::vector<int64_t>>{{6, 16}, {6}, {4, 16}, {4, 4}, {1, 16}, {2, 1}});
  CHECK(m->shortlist_size == 4);
  CHECK(m->n_clusters == 2);
  CHECK(m->head_size == 6);
  CHECK(m->cutoffs == std::vector<int64_t>{4, 8, 10});
  nn::AdaptiveLogSoftmaxWithLossOptions o(8, 10, {4});
  CHECK(o.div_value() == 4.0);
  CHECK(!o.head_bias());
  CHECK(nn::AdaptiveLogSoftmaxWithLoss(8, 10, std::vector<int64_t>{4})->head->bias.defined() == false);
  CHECK(repr(*m) == "AdaptiveLogSoftmaxWithLoss");
  std::ostringstream os;
  os << *m;
  CHECK(os.str() ==
        "AdaptiveLogSoftmaxWithLoss(\n"
        "  (head): Linear(in_features=16, out_features=6, bias=True)\n"
        "  (tail): ModuleList(\n"
        "    (0): Sequential(\n"
        "      (0): Linear(in_features=16, out_features=4, bias=False)\n"
        "      (1): Linear(in_features=4, out_features=4, bias=False)\n"
        "    )\n"
        "    (1): Sequential(\n"
        "      (0): Linear(in_features=16, out_features=1, bias=False)\n"
        "      (1): Linear(in_features=1, out_features=2, bias=False)\n"
        "    )\n"
        "  )\n"
        ")");
  // Clones keep the structure and the values.
  auto c = std::dynamic_pointer_cast<nn::AdaptiveLogSoftmaxWithLossImpl>(m->clone());
  REQUIRE(c);
  CHECK(c->named_parameters().size() == 6);
  check_close(c->tail->ptr<nn::SequentialImpl>(1)->ptr<nn::LinearImpl>(1)->weight,
              m->tail->ptr<nn::SequentialImpl>(1)->ptr<nn::LinearImpl>(1)->weight, 0);
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: forward, log_prob and predict are PyTorch's") {
  auto m = fixture_module();
  Tensor x = fixture_input(), t = longs({0, 5, 9, 3, 7});
  nn::ASMoutput out = m(x, t);
  check_close(out.output,
              {-0.33667241234741374, -11.178473307480285, -0.8960065714254177, -2.5076540665729556,
               -11.13098002222543},
              1e-10);
  CHECK(out.loss == doctest::Approx(5.2099572760103).epsilon(1e-12));
  check_close(
      m->log_prob(x)[1],
      {-0.9077603007637475, -1.7260487883187912, -2.2886427023226235, -2.522160208213163, -8.068339066691314,
       -11.178473307480285, -6.395480776233299, -2.41798313022668, -2.5745917855080713, -2.664781773977804},
      1e-10);
  check_close(m->predict(x), {0, 0, 9, 9, 3}, 0);
  // forward's output is log_prob gathered at the targets; log_prob rows are distributions.
  check_close(out.output, m->log_prob(x).gather(1, t.unsqueeze(1)).squeeze(1), 1e-12);
  check_close(m->log_prob(x).exp().sum({1}), {1, 1, 1, 1, 1}, 1e-12);
  check_close(m->predict(x), m->log_prob(x).argmax(1), 0);
  // Unbatched: a 1-d input with a 0-d target.
  nn::ASMoutput one = m(x[2], tensor(int64_t{9}));
  CHECK(one.output.dim() == 0);
  check_close(one.output, {-0.8960065714254177}, 1e-10);
  CHECK(m->log_prob(x[1]).dim() == 1);
  CHECK(m->predict(x[2]).item<int64_t>() == 9);
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: a zero-width tail projection (in_features < div_value^(i+1))") {
  // 8 / 4^2 floors to 0, as in PyTorch: cluster 1 scores its classes uniformly.
  nn::AdaptiveLogSoftmaxWithLoss m(8, 10, std::vector<int64_t>{4, 8});
  CHECK(m->tail->ptr<nn::SequentialImpl>(1)->ptr<nn::LinearImpl>(0)->weight.sizes().vec() ==
        std::vector<int64_t>{0, 8});
  Tensor x = randn({3, 8}), t = longs({0, 5, 9});
  Tensor lp = m->log_prob(x);
  check_close(m(x, t).output, lp.gather(1, t.unsqueeze(1)).squeeze(1), 1e-6);
  check_close(lp.narrow(1, 8, 1) - lp.narrow(1, 9, 1), {0, 0, 0}, 0);
  check_close(lp.exp().sum({1}), {1, 1, 1}, 1e-6);
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: gradients by float64 gradcheck") {
  auto m = fixture_module();
  Tensor t = longs({0, 5, 9, 3, 7, 8});
  check_grad([&](const TensorList& in) { return m(in[0], t).output; }, {(ember::test::rand_leaf({6, 16}))});
  Tensor w = m->tail->ptr<nn::SequentialImpl>(0)->ptr<nn::LinearImpl>(1)->weight;
  m(fixture_input(), longs({0, 5, 9, 3, 7})).output.sum().backward();
  CHECK(w.grad().defined());
  CHECK(m->head->weight.grad().defined());
  check_grad([&](const TensorList& in) { return m->log_prob(in[0]); }, {ember::test::rand_leaf({3, 16})});
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: PyTorch's error texts") {
  const char* cut =
      "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where "
      "each value is between 1 and n_classes-1";
  check_error([&] { nn::AdaptiveLogSoftmaxWithLoss(8, 10, std::vector<int64_t>{8, 4}); }, cut);
  check_error([&] { nn::AdaptiveLogSoftmaxWithLoss(8, 10, std::vector<int64_t>{4, 10}); }, cut);
  check_error([&] { nn::AdaptiveLogSoftmaxWithLoss(8, 10, std::vector<int64_t>{0, 4}); }, cut);
  check_error([&] { nn::AdaptiveLogSoftmaxWithLoss(8, 10, std::vector<int64_t>{4, 4}); }, cut);
  nn::AdaptiveLogSoftmaxWithLoss m(8, 10, std::vector<int64_t>{4, 8});
  check_error(
      [&] {
        m(randn({3, 8}), longs({0, 1}));
      },
      "Input and target should have the same size in the batch dimension.");
  check_error(
      [&] {
        m(randn({3, 8}), longs({0, 1, 10}));
      },
      "Target values should be in [0, 9], but values in range [0, 10] were found. ");
  check_error(
      [&] {
        m(randn({3, 8, 1}), longs({0, 1, 1}));
      },
      "1D target tensor expects 2D input tensors, but found inputs with size [3, 8, 1]");
  check_error(
      [&] {
        m(randn({3, 8}), tensor(int64_t{1}));
      },
      "0D target tensor expects 1D input tensors, but found inputs with size [3, 8]");
  check_error(
      [&] {
        m(randn({3, 8}), longs({0, 1, 1, 2}).view({2, 2}));
      },
      "0D or 1D target tensor expected, multi-target not supported");
}
