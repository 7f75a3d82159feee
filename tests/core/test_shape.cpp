// Copying shape ops: cat/concat, stack, repeat, flip, roll, tril/triu (+ in-place forms).
// Values are hand-computed (math in comments) or from PyTorch 1.13 (one-liner given).
#include <limits>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::seq;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::shape;
using Shape = std::vector<int64_t>;

namespace {
}  // namespace

TEST_CASE("test_shape: cat values, dims and legacy empty tensors") {
  Tensor a = seq({2, 2}), b = seq({2, 1}) + 10;
  // dim 1: rows [0 1 | 10], [2 3 | 11]
  check_close(cat({a, b}, 1), {0, 1, 10, 2, 3, 11});
  check_close(cat({a, b}, -1), {0, 1, 10, 2, 3, 11});
  check_close(cat({a, a.t()}, 0), {0, 1, 2, 3, 0, 2, 1, 3});
  CHECK(shape(concat({a, b}, 1)) == Shape{2, 3});
  // A 1-d empty tensor is skipped whatever the others' shapes (PyTorch's legacy rule).
  Tensor r = cat({zeros({0}), a, zeros({0})}, 1);
  CHECK(shape(r) == Shape{2, 2});
  check_close(r, a);
  CHECK(shape(cat({zeros({0}), zeros({0})})) == Shape{0});
  // Zero-size along the cat dim participates normally.
  CHECK(shape(cat({zeros({2, 0}), a}, 1)) == Shape{2, 2});
  // Many inputs.
  TensorList many;
  for (int i = 0; i < 12; ++i) many.push_back(full({1}, i, kDouble));
  check_close(cat(many), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // The result is a fresh tensor.
  CHECK_FALSE(cat({a, b}, 1).is_alias_of(a));
}

TEST_CASE("test_shape: cat promotes dtypes") {
  // torch.cat([torch.zeros(2, dtype=torch.int32), torch.zeros(1, dtype=torch.bool)]).dtype == int32
  CHECK(cat({tensor({1, 2}, kInt), tensor({true})}).dtype() == kInt);
  Tensor f = cat({tensor({1, 2}, kInt), tensor({0.5}, kHalf)});
  CHECK(f.dtype() == kHalf);
  check_close(f, {1, 2, 0.5});
  // A skipped legacy empty tensor still takes part in type promotion.
  CHECK(cat({zeros({0}, kDouble), tensor({1, 2}, kInt)}).dtype() == kDouble);
  check_close(cat({tensor({true, false}), tensor({3}, kLong)}), {1, 0, 3});
}

TEST_CASE("test_shape: cat errors") {
  check_error([] { cat({}); }, "torch.cat(): expected a non-empty list of Tensors");
  check_error(
      [] {
        cat({zeros({2, 2}), zeros({3, 3})}, 1);
      },
      "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 "
      "in "
      "the list.");
  check_error(
      [] {
        cat({zeros({2, 2}), zeros({2})}, 1);
      },
      "Tensors must have same number of dimensions: got 2 and 1");
  check_error(
      [] {
        cat({tensor(1.0), zeros({1})});
      },
      "zero-dimensional tensor (at position 0) cannot be concatenated");
  check_error(
      [] {
        cat({zeros({2, 2}), zeros({2, 2})}, 2);
      },
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST_CASE("test_shape: cat gradients") {
  Tensor a = rand_leaf({2, 3}), b = rand_leaf({2, 2});
  check_grad([](const TensorList& x) { return cat({x[0], x[1]}, 1); }, {a, b});
  // Non-contiguous input, negative dim, a legacy empty input in the list.
  Tensor c = rand_leaf({3, 2});
  check_grad([](const TensorList& x) { return cat({x[0].t(), zeros({0}, kDouble), x[1]}, -1); }, {c, b});
  check_gradgrad(
      [](const TensorList& x) {
        return cat({x[0], x[1] * x[1]}, 0).square();
      },
      {a, rand_leaf({1, 3})});
  // Mixed dtypes: the gradient reaches each input in its own dtype.
  Tensor f = ones({2}, requires_grad()), d = ones({1}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor out = cat({f, d});
  CHECK(out.dtype() == kDouble);
  (out * from_values({1, 2, 3}, {3})).sum().backward();
  CHECK(f.grad().dtype() == kFloat);
  check_close(f.grad(), {1, 2});
  check_close(d.grad(), {3});
  CHECK(out.grad_fn()->name() == "CatBackward0");
}

TEST_CASE("test_shape: stack") {
  Tensor a = seq({2}), b = seq({2}) + 5;
  check_close(stack({a, b}), {0, 1, 5, 6});
  Tensor s1 = stack({a, b}, 1);  // [[0, 5], [1, 6]]
  CHECK(shape(s1) == Shape{2, 2});
  check_close(s1, {0, 5, 1, 6});
  check_close(stack({a, b}, -1), {0, 5, 1, 6});
  CHECK(shape(stack({tensor(1.0), tensor(2.0), tensor(3.0)})) == Shape{3});
  CHECK(shape(stack({zeros({0, 2}), zeros({0, 2})}, 1)) == Shape{0, 2, 2});
  CHECK(stack({tensor({1}, kInt), tensor({2.5})}).dtype() == kFloat);
  check_error([] { stack({}); }, "stack expects a non-empty TensorList");
  check_error(
      [] {
        stack({zeros({2}), zeros({3})});
      },
      "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
  check_error([] { stack({zeros({2}), zeros({2})}, 2); }, "Dimension out of range");
  Tensor x = rand_leaf({2, 3}), y = rand_leaf({3, 2});
  check_grad([](const TensorList& t) { return stack({t[0], t[1].t()}, 1); }, {x, y});
  check_gradgrad([](const TensorList& t) { return stack({t[0] * t[0], t[1].t()}, 2); }, {x, y});
}

TEST_CASE("test_shape: repeat") {
  Tensor a = seq({2});  // [0, 1]
  check_close(a.repeat({3}), {0, 1, 0, 1, 0, 1});
  // repeat({2, 2}) of [0, 1]: the row [0 1 0 1] twice.
  Tensor r = a.repeat({2, 2});
  CHECK(shape(r) == Shape{2, 4});
  check_close(r, {0, 1, 0, 1, 0, 1, 0, 1});
  // [[0, 1], [2, 3]].repeat(2, 1) stacks the matrix twice; .repeat(1, 2) puts it side by side.
  Tensor m = seq({2, 2});
  check_close(m.repeat({2, 1}), {0, 1, 2, 3, 0, 1, 2, 3});
  check_close(m.repeat({1, 2}), {0, 1, 0, 1, 2, 3, 2, 3});
  check_close(m.t().repeat({1, 2}), {0, 2, 0, 2, 1, 3, 1, 3});
  CHECK(shape(m.repeat({0, 3})) == Shape{0, 6});
  CHECK(shape(tensor(7.0).repeat({2, 2})) == Shape{2, 2});
  CHECK(shape(tensor(7.0).repeat({})) == Shape{});
  Tensor i = tensor({true, false}).repeat({2});
  CHECK(i.dtype() == kBool);
  check_close(i, {1, 0, 1, 0});
  check_error(
      [] {
        ones({2, 3}).repeat({2});
      },
      "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  check_error(
      [] {
        ones({2, 3}).repeat({2, -1});
      },
      "Trying to create tensor with negative dimension -3: [4, -3]");
  // Gradient: each input element collects the gradients of all its copies.
  Tensor x = ones({2}, TensorOptions().dtype(kDouble).requires_grad(true));
  (x.repeat({3, 2}) * seq({3, 4})).sum().backward();
  // x[0] appears at columns 0 and 2 of each row: 0+2+4+6+8+10 = 30; x[1]: 1+3+5+7+9+11 = 36.
  check_close(x.grad(), {30, 36});
  check_grad([](const TensorList& t) { return t[0].t().repeat({2, 1, 3}); }, {rand_leaf({3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).repeat({2, 2}); }, {rand_leaf({2, 2})});
}

TEST_CASE("test_shape: flip") {
  Tensor m = seq({2, 3});  // [[0 1 2], [3 4 5]]
  check_close(m.flip({0}), {3, 4, 5, 0, 1, 2});
  check_close(m.flip({1}), {2, 1, 0, 5, 4, 3});
  check_close(m.flip({0, 1}), {5, 4, 3, 2, 1, 0});
  check_close(m.flip({-1}), {2, 1, 0, 5, 4, 3});
  check_close(m.flip({}), {0, 1, 2, 3, 4, 5});
  check_close(m.t().flip({0}), {2, 5, 1, 4, 0, 3});  // non-contiguous input
  check_close(seq({3}, kLong).flip({0}), {2, 1, 0});
  CHECK(seq({3}, kLong).flip({0}).dtype() == kLong);
  CHECK(shape(zeros({0, 2}).flip({0})) == Shape{0, 2});
  check_close(tensor(4.0).flip({0}), {4});
  check_error([] { zeros({2, 3}).flip({0, 0}); }, "dim 0 appears multiple times in the list of dims");
  check_error(
      [] {
        zeros({2, 3}).flip({2});
      },
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_grad([](const TensorList& t) { return t[0].flip({0, 2}); }, {rand_leaf({2, 3, 2})});
  check_grad([](const TensorList& t) { return t[0].t().flip({1}); }, {rand_leaf({3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).flip({1}); }, {rand_leaf({2, 3})});
}

TEST_CASE("test_shape: roll") {
  Tensor m = seq({2, 3}, kLong);  // [[0 1 2], [3 4 5]]
  // torch.arange(6).view(2, 3).roll(1) -> [[5, 0, 1], [2, 3, 4]] (flattened, rolled, reshaped)
  check_close(m.roll({1}), {5, 0, 1, 2, 3, 4});
  // .roll(-1, 1) -> [[1, 2, 0], [4, 5, 3]]
  check_close(m.roll({-1}, {1}), {1, 2, 0, 4, 5, 3});
  // .roll([1, 1], [0, 1]) -> [[5, 3, 4], [2, 0, 1]]
  check_close(m.roll({1, 1}, {0, 1}), {5, 3, 4, 2, 0, 1});
  check_close(m.roll({7}, {1}), m.roll({1}, {1}));  // shifts wrap around
  check_close(m.roll({-4}, {1}), m.roll({-1}, {1}));
  check_close(m.roll({1, 1}, {1, 1}), m.roll({2}, {1}));  // a repeated dim rolls twice
  check_close(m.t().roll({1}, {0}), {2, 5, 0, 3, 1, 4});  // non-contiguous input
  CHECK(m.roll({1}).dtype() == kLong);
  CHECK(shape(zeros({0, 3}).roll({1}, {0})) == Shape{0, 3});
  // An empty view with a huge stride along the rolled or flipped dim: the offsets of its
  // slices (its last element) overflowed int64 (UBSan); an empty result, as PyTorch.
  Tensor huge = empty({0}).as_strided({4, 0}, {std::numeric_limits<int64_t>::max() / 2, 1});
  CHECK(shape(huge.roll({1}, {0})) == Shape{4, 0});
  CHECK(shape(huge.flip({0})) == Shape{4, 0});
  check_close(tensor(3.0).roll({1}), {3});
  check_error([] { zeros({2, 3}).roll({}, {}); }, "`shifts` required");
  check_error([] { zeros({2, 3}).roll({1, 2}); }, "shifts and dimensions must align. shifts: 2, dims:0");
  check_error([] { zeros({2, 3}).roll({1, 2}, {0}); }, "shifts and dimensions must align. shifts: 2, dims:1");
  check_error([] { zeros({2, 3}).roll({1}, {2}); }, "Dimension out of range");
  check_error([] { tensor(1.0).roll({1}, {0}); }, "imension specified as 0 but tensor has no dimensions");
  check_grad([](const TensorList& t) { return t[0].roll({2, -1}, {0, 1}); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& t) { return t[0].t().roll({1}); }, {rand_leaf({3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).roll({1}, {0}); }, {rand_leaf({3})});
}

TEST_CASE("test_shape: tril and triu") {
  Tensor m = seq({3, 3}) + 1;  // [[1 2 3], [4 5 6], [7 8 9]]
  // tril keeps j - i <= k, triu keeps j - i >= k.
  check_close(m.tril(), {1, 0, 0, 4, 5, 0, 7, 8, 9});
  check_close(m.tril(1), {1, 2, 0, 4, 5, 6, 7, 8, 9});
  check_close(m.tril(-1), {0, 0, 0, 4, 0, 0, 7, 8, 0});
  check_close(m.triu(), {1, 2, 3, 0, 5, 6, 0, 0, 9});
  check_close(m.triu(1), {0, 2, 3, 0, 0, 6, 0, 0, 0});
  check_close(m.triu(-1), {1, 2, 3, 4, 5, 6, 0, 8, 9});
  check_close(m.triu(5), std::vector<double>(9, 0.0));
  check_close(m.tril(-5), std::vector<double>(9, 0.0));
  // Non-square and batched: each matrix of the batch independently.
  Tensor r = seq({2, 2, 3}) + 1;
  check_close(r.tril(), {1, 0, 0, 4, 5, 0, 7, 0, 0, 10, 11, 0});
  check_close(m.t().triu(), {1, 4, 7, 0, 5, 8, 0, 0, 9});  // non-contiguous input
  // torch.ones(3, 3, dtype=torch.bool).triu(1)
  Tensor b = ones({3, 3}, kBool).triu(1);
  CHECK(b.dtype() == kBool);
  check_close(b, {0, 1, 1, 0, 0, 1, 0, 0, 0});
  check_close(tensor({{1, 2}, {3, 4}}).tril(), {1, 0, 3, 4});
  CHECK(shape(zeros({0, 3}).tril()) == Shape{0, 3});
  CHECK(shape(zeros({2, 0, 3}).triu()) == Shape{2, 0, 3});
  check_error([] { zeros({3}).tril(); }, "tril: input tensor must have at least 2 dimensions");
  check_error([] { zeros({3}).triu(); }, "triu: input tensor must have at least 2 dimensions");
  check_grad([](const TensorList& t) { return t[0].tril(); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& t) { return t[0].transpose(1, 2).triu(-1); }, {rand_leaf({2, 4, 3})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).triu(1); }, {rand_leaf({3, 3})});
}

TEST_CASE("test_shape: tril_ and triu_ in place") {
  Tensor m = seq({3, 3}) + 1;
  uint32_t v = m._version();
  Tensor& same = m.tril_();
  CHECK(same.is_same(m));
  CHECK(m._version() > v);
  check_close(m, {1, 0, 0, 4, 5, 0, 7, 8, 9});
  // Into a non-contiguous view: writes through to the base.
  Tensor base = seq({3, 3}) + 1;
  base.t().triu_(1);  // keeps (i, j) of base.t() with j > i, i.e. base's strictly lower part
  check_close(base, {0, 0, 0, 4, 0, 0, 7, 8, 0});
  Tensor bits = ones({2, 2}, kInt);
  bits.triu_();
  check_close(bits, {1, 1, 0, 1});
  // Autograd through an in-place triangle on a non-leaf: d/dx sum(w * tril(2x)) = 2 w tril-mask.
  Tensor x = ones({2, 2}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor y = x * 2;
  y.tril_();
  (y * from_values({1, 2, 3, 4}, {2, 2})).sum().backward();
  check_close(x.grad(), {2, 0, 6, 8});
  check_error([&] { x.tril_(); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
  check_error([] { zeros({3}).triu_(); }, "triu: input tensor must have at least 2 dimensions");
  check_grad([](const TensorList& t) { return (t[0] * 1.0).triu_(); }, {rand_leaf({3, 3})});
}
