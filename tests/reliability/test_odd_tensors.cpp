// Odd tensors through every op family: zero-size dimensions (PyTorch's identities for empty
// reductions and its errors where there is no identity), 0-dim scalars, and extreme strides
// (expand's stride 0, as_strided with overlapping rows, transposed, sliced with a step, a
// scalar expanded to a matrix). The strided cases run each family on the odd view and on a
// contiguous copy of it and require the same values and the same gradient at the leaf; the
// expected values of the empty and scalar cases are PyTorch 2.9's.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::longs;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace F = ember::nn::functional;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
using Shape = std::vector<int64_t>;
}  // namespace

// ---- zero-size dimensions ---------------------------------------------------------------------

TEST_CASE("odd tensors: empty reductions give PyTorch's identities, or its errors") {
  Tensor e = zeros({0, 3}, kDouble);
  CHECK(values(e.sum()) == std::vector<double>{0});
  CHECK(values(e.sum(0)) == std::vector<double>{0, 0, 0});
  CHECK(shape(e.sum(1)) == Shape{0});
  CHECK(values(e.prod()) == std::vector<double>{1});
  CHECK(values(e.prod(0)) == std::vector<double>{1, 1, 1});
  check_close(e.mean(), {kNaN});
  check_close(e.mean(IntArrayRef{0}), {kNaN, kNaN, kNaN});
  check_close(e.var(0), {kNaN, kNaN, kNaN});
  check_close(e.logsumexp({0}), {-kInf, -kInf, -kInf});
  CHECK(values(e.norm()) == std::vector<double>{0});
  CHECK(e.to(kBool).all().item<bool>() == true);
  CHECK(e.to(kBool).any().item<bool>() == false);
  // Reducing the non-empty dim of an empty tensor is fine and empty.
  auto [v1, i1] = e.max(1);
  CHECK(shape(v1) == Shape{0});
  CHECK(shape(i1) == Shape{0});
  CHECK(shape(e.amax({1})) == Shape{0});
  CHECK(shape(e.argmax(1)) == Shape{0});
  // No identity for max/min/argmax: PyTorch's errors.
  check_error([&] { e.max(); },
              "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
              "the 'dim' argument.");
  check_error([&] { e.min(); }, "min(): Expected reduction dim to be specified for input.numel() == 0.");
  check_error([&] { e.max(0); }, "max(): Expected reduction dim 0 to have non-zero size.");
  check_error([&] { e.amax({0}); }, "amax(): Expected reduction dim 0 to have non-zero size.");
  check_error([&] { e.argmax(); }, "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
}

TEST_CASE("odd tensors: zero-size dims through unary, binary, matmul, softmax, cat, index, sort, scan") {
  Tensor e = zeros({0, 3}, kDouble);
  CHECK(shape(e.exp()) == Shape{0, 3});
  CHECK(shape(e + ones({1, 3}, kDouble)) == Shape{0, 3});
  CHECK(shape(zeros({0, 1}) + ones({1, 4})) == Shape{0, 4});
  check_error([&] { e + zeros({2, 3}, kDouble); },
              "The size of tensor a (0) must match the size of tensor b (2) at non-singleton dimension 0");
  // matmul with k = 0 is a matrix of zeros; m = 0 or a batch of 0 is empty.
  CHECK(values(zeros({2, 0}).matmul(zeros({0, 3}))) == std::vector<double>(6, 0.0));
  CHECK(shape(zeros({0, 4}).matmul(zeros({4, 3}))) == Shape{0, 3});
  CHECK(shape(bmm(zeros({0, 2, 3}), zeros({0, 3, 4}))) == Shape{0, 2, 4});
  CHECK(shape(e.softmax(0)) == Shape{0, 3});
  CHECK(shape(e.log_softmax(1)) == Shape{0, 3});
  CHECK(shape(e.cumsum(0)) == Shape{0, 3});
  // cat skips PyTorch's legacy 1-d empty tensors and empty rows.
  check_close(cat({zeros({0}, kDouble), ones({2, 3}, kDouble)}), std::vector<double>(6, 1.0));
  check_close(cat({e, ones({2, 3}, kDouble)}), std::vector<double>(6, 1.0));
  CHECK(shape(ones({3, 2}).index_select(0, zeros({0}, kLong))) == Shape{0, 2});
  check_close(zeros({3}, kDouble).scatter(0, zeros({0}, kLong), zeros({0}, kDouble)), {0, 0, 0});
  auto [sv, si] = e.sort(1);
  CHECK(shape(sv) == Shape{0, 3});
  CHECK(shape(si) == Shape{0, 3});
  auto [tv, ti] = zeros({0}).topk(0);
  CHECK(shape(tv) == Shape{0});
  check_error([] { zeros({0}).topk(1); }, "selected index k out of range");
}

TEST_CASE("odd tensors: zero-size batches through conv, norms and losses") {
  Tensor w = ones({3, 2, 3, 3}, kDouble).requires_grad_(true);
  Tensor y = conv2d(zeros({0, 2, 5, 5}, kDouble), w);
  CHECK(shape(y) == Shape{0, 3, 3, 3});
  y.sum().backward();
  CHECK(values(w.grad()) == std::vector<double>(54, 0.0));
  CHECK(shape(layer_norm(zeros({0, 4}), {4})) == Shape{0, 4});
  check_close(mse_loss(zeros({0}), zeros({0})), {kNaN});
  check_close(cross_entropy_loss(zeros({0, 3}), zeros({0}, kLong)), {kNaN});
  check_close(cross_entropy_loss(zeros({0, 3}), zeros({0}, kLong), std::nullopt, Reduction::Sum), {0});
}

TEST_CASE("odd tensors: gradients through zero-size tensors have the input's (empty) shape") {
  Tensor x = zeros({0, 3}, kDouble).requires_grad_(true);
  (x.exp().sum() + x.prod(0).sum() + x.softmax(1).sum() + x.cumsum(0).sum()).backward();
  CHECK(shape(x.grad()) == Shape{0, 3});
  Tensor a = zeros({2, 0}, kDouble).requires_grad_(true), b = zeros({0, 3}, kDouble).requires_grad_(true);
  Tensor c = a.matmul(b);
  CHECK(values(c) == std::vector<double>(6, 0.0));
  c.sum().backward();
  CHECK(shape(a.grad()) == Shape{2, 0});
  CHECK(shape(b.grad()) == Shape{0, 3});
  // prod over an empty dim: d(1)/dx is nothing to differentiate, the sum's gradient is zeros.
  Tensor s = zeros({3, 0}, kDouble).requires_grad_(true);
  s.prod(1).sum().backward();
  CHECK(shape(s.grad()) == Shape{3, 0});
}

// ---- 0-dim scalars ----------------------------------------------------------------------------

TEST_CASE("odd tensors: 0-dim scalars through reductions, softmax, scans, sort, index and matmul") {
  Tensor s = scalar_tensor(3.0, kDouble);
  CHECK(values(s.sum(IntArrayRef{0})) == std::vector<double>{3});
  CHECK(values(s.softmax(0)) == std::vector<double>{1});
  CHECK(values(s.cumsum(0)) == std::vector<double>{3});
  auto [mv, mi] = s.max(0);
  CHECK(mv.dim() == 0);
  CHECK(mi.item<int64_t>() == 0);
  auto [sv, si] = s.sort();
  CHECK(sv.item<double>() == 3);
  CHECK(si.item<int64_t>() == 0);
  CHECK(shape(s.unsqueeze(0)) == Shape{1});
  check_error([&] { s.sum(IntArrayRef{1}); }, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  check_error([&] { s.matmul(ones({3}, kDouble)); },
              "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  // A 0-dim operand broadcasts in every binary op, forward and backward.
  Tensor a = rand_leaf({}), m = rand_leaf({2, 3});
  check_grad([](const TensorList& x) { return x[0] * x[1] + x[0].exp() - x[1] / (x[0] + 2.0); }, {a, m});
  check_grad([](const TensorList& x) { return (x[0] * x[1]).softmax(1).sum(0); }, {a, m});
}

// ---- extreme strides -------------------------------------------------------------------------

namespace {

/// One result per op family for a 2-d (3, 4) float64 input.
std::vector<std::pair<std::string, Tensor>> families(const Tensor& x) {
  Tensor row = arange(4, kDouble).view({1, 4}) * 0.25 + 1.0;
  Tensor cols = longs({3, 0, 0, 2});
  Tensor gather_idx = longs({0, 3, 1, 1, 2, 2, 0, 3, 3, 1, 0, 2}).view({3, 4});
  return {
      {"unary", x.exp() + x.sigmoid() + x.abs()},
      {"binary", x * x + x / row + (x - row).pow(2)},
      {"sum", x.sum(1)},
      {"amax", x.amax({0})},
      {"logsumexp", x.logsumexp({1})},
      {"var", x.var(1)},
      {"norm", x.norm()},
      {"matmul", x.matmul(x.t())},
      {"softmax", x.softmax(1) + x.log_softmax(0)},
      {"cat", cat({x, x * 2.0}, 1)},
      {"index_select", x.index_select(1, cols)},
      {"gather", x.gather(1, gather_idx)},
      {"scatter", zeros({3, 4}, kDouble).scatter(1, gather_idx, x)},
      {"sort", std::get<0>(x.sort(1))},
      {"cumsum", x.cumsum(1)},
      {"conv", conv2d(x.view({1, 1, 3, 4}).contiguous(), arange(4, kDouble).view({1, 1, 2, 2}))},
      {"layer_norm", layer_norm(x, {4})},
      {"mse_loss", mse_loss(x, row.expand({3, 4}))},
      {"cross_entropy", cross_entropy_loss(x, longs({1, 3, 0}))},
  };
}

/// Runs every family on `view` (an odd view of `leaf`) and on a contiguous copy of it: the
/// same values, and the same gradient reaching the leaf.
void check_families(Tensor leaf, const std::function<Tensor(const Tensor&)>& make_view) {
  Tensor odd = make_view(leaf);
  REQUIRE(shape(odd) == Shape{3, 4});
  auto got = families(odd);
  auto want = families(odd.contiguous().clone());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("family: " << got[k].first);
    check_close(got[k].second, want[k].second, 1e-12, 1e-12);
    // Weighted so every output element counts differently (sort, softmax: not just sums).
    auto grad_via = [&](bool strided) {
      leaf.mutable_grad() = Tensor();
      Tensor v = make_view(leaf);
      Tensor out = families(strided ? v : v.contiguous().clone())[k].second;
      Tensor weights = arange(out.numel(), kDouble).view(out.sizes()) * 0.1 + 1.0;
      (out * weights).sum().backward();
      return leaf.grad().clone();
    };
    check_close(grad_via(true), grad_via(false), 1e-10, 1e-10);
  }
}

}  // namespace

TEST_CASE("odd tensors: expand (stride 0) through every family, forward and gradient") {
  manual_seed(1);
  check_families(rand_leaf({3, 1}), [](const Tensor& t) { return t.expand({3, 4}); });
  // A 0-dim scalar expanded to the whole matrix: every stride 0.
  check_families(rand_leaf({}), [](const Tensor& t) { return t.expand({3, 4}); });
}

TEST_CASE("odd tensors: as_strided with overlapping rows through every family") {
  manual_seed(2);
  // Row i is elements 2i .. 2i + 3 of a 10-element leaf: rows 0 and 1 share two elements.
  Tensor leaf = rand_leaf({10});
  Tensor v = leaf.as_strided({3, 4}, {2, 1});
  std::vector<double> lv = values(leaf);
  check_close(v.select(0, 1), std::vector<double>(lv.begin() + 2, lv.begin() + 6), 0, 0);
  check_families(leaf, [](const Tensor& t) { return t.as_strided({3, 4}, {2, 1}); });
  // The overlap's gradient: element 2i+j is used by every row that covers it.
  Tensor g = leaf.as_strided({3, 4}, {2, 1}).sum();
  leaf.mutable_grad() = Tensor();
  g.backward();
  CHECK(values(leaf.grad()) == std::vector<double>{1, 1, 2, 2, 2, 2, 1, 1, 0, 0});
  check_grad([](const TensorList& x) { return x[0].as_strided({3, 4}, {2, 1}).pow(2).cumsum(1); }, {rand_leaf({10})});
  // Odd strides with an offset: columns 3 apart, rows 1 apart, from element 1.
  check_families(rand_leaf({16}), [](const Tensor& t) { return t.as_strided({3, 4}, {1, 3}, 1); });
}

TEST_CASE("odd tensors: transposed and step-sliced views through every family") {
  manual_seed(3);
  check_families(rand_leaf({4, 3}), [](const Tensor& t) { return t.t(); });
  // Every other row and every third column of a (5, 10) leaf.
  check_families(rand_leaf({5, 10}), [](const Tensor& t) { return t.slice(0, 0, 5, 2).slice(1, 0, 10, 3); });
  // A permuted 3-d leaf, one plane selected, every other row, transposed: strides (16, 2).
  check_families(rand_leaf({3, 2, 8}),
                 [](const Tensor& t) { return t.permute({2, 0, 1}).select(2, 1).slice(0, 0, 8, 2).t(); });
}
