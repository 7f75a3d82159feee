// gather, scatter (src and value), scatter_, scatter_add(_), index_add(_): values from
// PyTorch's documentation examples or worked by hand, error texts, gradients.
#include <limits>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::seq;
using ember::test::longs;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::shape;
using Shape = std::vector<int64_t>;

namespace {
Tensor longs2(std::vector<int64_t> v, IntArrayRef s) { return tensor(v).view(s); }
}  // namespace

TEST_CASE("test_scatter: gather values") {
  Tensor x = from_values({1, 2, 3, 4}, {2, 2});
  // torch.gather(t, 1, [[0, 0], [1, 0]]) -> [[1, 1], [4, 3]] (PyTorch's docs)
  check_close(x.gather(1, longs2({0, 0, 1, 0}, {2, 2})), {1, 1, 4, 3});
  // dim 0: out[i][j] = x[idx[i][j]][j] -> [[x00, x11], [x10, x01]]
  check_close(x.gather(0, longs2({0, 1, 1, 0}, {2, 2})), {1, 4, 3, 2});
  check_close(x.gather(-1, longs2({1, 1, 1, 1, 0, 0}, {2, 3})), {2, 2, 2, 4, 3, 3});  // wider than self
  Tensor y = seq({3, 4});
  check_close(y.gather(1, longs2({3, 0}, {2, 1})), {3, 4});            // fewer rows than self
  check_close(y.t().gather(0, longs2({2, 0, 1}, {1, 3})), {2, 4, 9});  // non-contiguous self
  check_close(y.gather(1, longs2({0, 3, 1, 2}, {2, 2}).t()),
              {0, 1, 7, 6});  // non-contiguous index [[0, 1], [3, 2]]
  Tensor s = tensor(5.0).gather(0, tensor(int64_t{0}));
  CHECK(shape(s) == Shape{});
  check_close(s, {5});
  check_close(seq({3}).gather(0, tensor(int64_t{2})), {2});
  CHECK(shape(y.gather(1, longs2({}, {0, 2}))) == Shape{0, 2});
  Tensor i = seq({2, 2}, kInt).gather(1, longs2({1, 1, 0, 0}, {2, 2}));
  CHECK(i.dtype() == kInt);
  check_close(i, {1, 1, 2, 2});
  check_close(tensor({true, false}).gather(0, longs({1, 0, 0})), {0, 1, 1});
}

TEST_CASE("test_scatter: gather errors and gradients") {
  Tensor y = zeros({3, 4});
  check_error([&] { y.gather(0, longs({0})); },
              "Index tensor must have the same number of dimensions as input tensor");
  check_error([&] { y.gather(0, tensor({{0}}, kInt)); }, "gather(): Expected dtype int64 for index");
  check_error(
      [&] {
        y.gather(1, zeros({4, 4}, kLong));
      },
      "Size does not match at dimension 0 expected index [4, 4] to be smaller than self [3, 4] apart from "
      "dimension 1");
  check_error(
      [&] {
        y.gather(0, longs2({5}, {1, 1}));
      },
      "index 5 is out of bounds for dimension 0 with size 3");
  check_error(
      [&] {
        y.gather(0, longs2({-1}, {1, 1}));
      },
      "index -1 is out of bounds for dimension 0 with size 3");
  check_error([&] { y.gather(2, longs2({0}, {1, 1})); }, "Dimension out of range");
  // Repeated indices: each element's gradient counts how often it was read.
  Tensor x = rand_leaf({3});
  x.gather(0, longs({0, 0, 2})).sum().backward();
  check_close(x.grad(), {2, 0, 1});
  Tensor idx = longs2({0, 2, 2, 1, 0, 0}, {2, 3});
  check_grad([idx](const TensorList& t) { return t[0].gather(0, idx); }, {rand_leaf({3, 3})});
  check_grad([idx](const TensorList& t) { return t[0].t().gather(1, idx.t()); }, {rand_leaf({4, 3})});
  check_grad([](const TensorList& t) { return t[0].gather(0, tensor(int64_t{1})); }, {rand_leaf({2})});
  check_gradgrad([idx](const TensorList& t) { return (t[0] * t[0]).gather(1, idx); }, {rand_leaf({2, 3})});
  CHECK(rand_leaf({2}).gather(0, longs({0})).grad_fn()->name() == "GatherBackward0");
}

TEST_CASE("test_scatter: scatter values") {
  Tensor src = seq({2, 5}) + 1;  // [[1..5], [6..10]]
  // zeros(3, 5).scatter_(0, [[0, 1, 2, 0]], src) (PyTorch's docs)
  check_close(zeros({3, 5}, kDouble).scatter(0, longs2({0, 1, 2, 0}, {1, 4}), src),
              {1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0});
  // zeros(3, 5).scatter_(1, [[0, 1, 2], [0, 1, 4]], src)
  check_close(zeros({3, 5}, kDouble).scatter(1, longs2({0, 1, 2, 0, 1, 4}, {2, 3}), src),
              {1, 2, 3, 0, 0, 6, 7, 0, 0, 8, 0, 0, 0, 0, 0});
  // The value form: zeros(2, 4).scatter_(1, [[2], [3]], 1.23)
  check_close(zeros({2, 4}).scatter(1, longs2({2, 3}, {2, 1}), 1.23), {0, 0, 1.23, 0, 0, 0, 0, 1.23});
  Tensor self = seq({2, 2});
  Tensor r = self.scatter(-1, longs2({1, 0}, {2, 1}), -1.0);
  check_close(r, {0, -1, -1, 3});
  check_close(self, {0, 1, 2, 3});  // out of place
  check_close(seq({2, 3}).t().scatter(0, longs2({2, 0}, {1, 2}), 9.0),
              {0, 9, 1, 4, 9, 5});  // non-contiguous self
  check_close(zeros({3}, kLong).scatter(0, longs({2}), tensor({7})), {0, 0, 7});
  check_close(zeros({2}, kBool).scatter(0, longs({1}), true), {0, 1});
  check_close(tensor(5.0).scatter(0, tensor(int64_t{0}), tensor(7.0)), {7});
  check_close(seq({3}).scatter(0, longs({}), 1.0), {0, 1, 2});
}

TEST_CASE("test_scatter: scatter_ in place") {
  Tensor x = zeros({2, 3});
  uint32_t v = x._version();
  Tensor& same = x.scatter_(1, longs2({2, 0}, {2, 1}), 4.0);
  CHECK(same.is_same(x));
  CHECK(x._version() > v);
  check_close(x, {0, 0, 4, 4, 0, 0});
  x.scatter_(0, longs2({1, 1, 1}, {1, 3}), ones({1, 3}));
  check_close(x, {0, 0, 4, 1, 1, 1});
  Tensor base = zeros({3, 2});
  base.t().scatter_(1, longs2({2, 0}, {2, 1}), 5.0);  // writes through the transposed view
  check_close(base, {0, 5, 0, 0, 5, 0});
}

TEST_CASE("test_scatter: scatter_add values") {
  // zeros(3, 5).scatter_add_(0, [[0, 1, 2, 0, 0]], ones(2, 5)) (PyTorch's docs)
  Tensor src = ones({2, 5}, kDouble);
  check_close(zeros({3, 5}, kDouble).scatter_add(0, longs2({0, 1, 2, 0, 0}, {1, 5}), src),
              {1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0});
  check_close(zeros({3, 5}, kDouble).scatter_add(0, longs2({0, 1, 2, 0, 0, 0, 1, 2, 2, 2}, {2, 5}), src),
              {2, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0, 2, 1, 1});
  // Repeated targets sum: 1 + 2 + 4 at 0, 3 at 2.
  check_close(zeros({3}, kDouble).scatter_add(0, longs({0, 0, 2, 0}), from_values({1, 2, 3, 4}, {4})),
              {7, 0, 3});
  Tensor acc = ones({3}, kLong);
  acc.scatter_add_(0, longs({1, 1}), tensor({5, 6}));
  check_close(acc, {1, 12, 1});
  check_close(zeros({2}, kBool).scatter_add(0, longs({0, 0}), tensor({false, true})), {1, 0});
}

TEST_CASE("test_scatter: views with huge strides") {
  // as_strided takes any stride on a dim of an empty tensor or a dim of one element, where its
  // size in bytes can overflow int64; the indexed loops' byte step of that dim did (fuzz_ops
  // under UBSan, the step of index_select and of these). None steps along such a dim:
  // PyTorch's empty and ordinary results.
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  Tensor e = empty({0}).as_strided({0, 2}, {huge, 1});
  Tensor none = longs2({}, {0, 2});
  CHECK(shape(e.gather(0, none)) == Shape{0, 2});
  CHECK(shape(e.scatter_(0, none, empty({0, 2}))) == Shape{0, 2});
  CHECK(shape(e.scatter_(0, none, 1.0)) == Shape{0, 2});
  CHECK(shape(e.scatter_add_(0, none, empty({0, 2}))) == Shape{0, 2});
  CHECK(shape(e.index_add_(0, longs({}), empty({0, 2}))) == Shape{0, 2});
  CHECK(shape(e.index_add_(1, longs({1, 0}), empty({0, 2}))) == Shape{0, 2});
  // One element along the huge stride: index 0 only, the ordinary results.
  Tensor base = from_values({1, 2}, {2});
  Tensor one = base.as_strided({1, 2}, {huge, 1});
  check_close(one.gather(0, longs2({0, 0, 0, 0, 0, 0}, {3, 2})), {1, 2, 1, 2, 1, 2});
  one.scatter_(0, longs2({0, 0}, {1, 2}), from_values({5, 6}, {1, 2}));
  check_close(base, {5, 6});
  one.scatter_add_(0, longs2({0, 0}, {1, 2}), from_values({1, 1}, {1, 2}));
  check_close(base, {6, 7});
  one.index_add_(0, longs({0, 0}), from_values({1, 2, 3, 4}, {2, 2}));
  check_close(base, {10, 13});
}

TEST_CASE("test_scatter: scatter errors") {
  Tensor x = zeros({3, 4});
  check_error([&] { x.scatter(0, tensor({{0}}, kInt), 1.0); }, "scatter(): Expected dtype int64 for index");
  check_error(
      [&] {
        x.scatter_add(0, tensor({{0}}, kInt), ones({1, 1}));
      },
      "scatter(): Expected dtype int64 for index");
  check_error(
      [&] {
        x.scatter(0, longs2({0}, {1, 1}), ones({1, 1}, kDouble));
      },
      "scatter(): Expected self.dtype to be equal to src.dtype");
  check_error([&] { x.scatter(0, longs({0}), 1.0); },
              "Index tensor must have the same number of dimensions as self tensor");
  check_error(
      [&] {
        x.scatter(0, longs2({0}, {1, 1}), ones({2}));
      },
      "Index tensor must have the same number of dimensions as src tensor");
  check_error(
      [&] {
        x.scatter(0, zeros({2, 2}, kLong), ones({1, 1}));
      },
      "Expected index [2, 2] to be smaller than self [3, 4] apart from dimension 0 and to be smaller size "
      "than src "
      "[1, 1]");
  check_error(
      [&] {
        x.scatter(0, zeros({4, 5}, kLong), 1.0);
      },
      "Expected index [4, 5] to be smaller than self [3, 4] apart from dimension 0");
  check_error(
      [&] {
        x.scatter(0, longs2({3}, {1, 1}), 1.0);
      },
      "index 3 is out of bounds for dimension 0 with size 3");
  check_error(
      [&] {
        x.scatter_add(1, longs2({-1}, {1, 1}), ones({1, 1}));
      },
      "index -1 is out of bounds for dimension 1 with size 4");
  check_error(
      [&] {
        x.scatter_(0, longs2({9}, {1, 1}), 1.0);
      },
      "index 9 is out of bounds for dimension 0 with size 3");
}

TEST_CASE("test_scatter: scatter gradients") {
  // Distinct targets per column, so the overwrite order does not matter.
  Tensor idx = longs2({0, 2, 1, 2, 0, 0}, {2, 3});
  check_grad([idx](const TensorList& t) { return t[0].scatter(0, idx, t[1]); },
             {rand_leaf({3, 3}), rand_leaf({2, 3})});
  // src larger than index: src elements outside index's extent get zero gradient.
  check_grad([idx](const TensorList& t) { return t[0].scatter(0, idx, t[1]); },
             {rand_leaf({3, 4}), rand_leaf({3, 4})});
  check_grad([idx](const TensorList& t) { return t[0].t().scatter(1, idx.t(), 2.0); }, {rand_leaf({3, 3})});
  check_grad([idx](const TensorList& t) { return t[0].scatter_add(0, idx, t[1]); },
             {rand_leaf({3, 3}), rand_leaf({2, 3})});
  check_grad(
      [](const TensorList& t) {
        return t[0].scatter_add(0, longs({1, 1, 1}), t[1]);
      },
      {rand_leaf({2}), rand_leaf({3})});
  check_gradgrad([idx](const TensorList& t) { return (t[0] * t[0]).scatter(0, idx, t[1] * t[1]); },
                 {rand_leaf({3, 3}), rand_leaf({2, 3})});
  check_gradgrad([idx](const TensorList& t) { return (t[0] * t[0]).scatter_add(0, idx, t[1] * t[1]); },
                 {rand_leaf({3, 3}), rand_leaf({2, 3})});
  // Hand-checked: scatter overwrites self[0, 1] and self[2, 0]; the src values feed them.
  Tensor self = rand_leaf({3, 2}), src = rand_leaf({1, 2});
  Tensor out = self.scatter(0, longs2({2, 0}, {1, 2}), src);
  CHECK(out.grad_fn()->name() == "ScatterBackward0");
  (out * from_values({1, 2, 3, 4, 5, 6}, {3, 2})).sum().backward();
  check_close(self.grad(), {1, 0, 3, 4, 0, 6});
  check_close(src.grad(), {5, 2});
  CHECK(self.scatter_add(0, longs2({0}, {1, 1}), src.index_select(1, longs({0}))).grad_fn()->name() ==
        "ScatterAddBackward0");
  // In place on a non-leaf.
  check_grad(
      [idx](const TensorList& t) {
        Tensor y = t[0] * 2.0;
        y.scatter_add_(0, idx, t[1]);
        return y.scatter_(1, idx.narrow(0, 0, 1), 0.5);
      },
      {rand_leaf({3, 3}), rand_leaf({2, 3})});
}

TEST_CASE("test_scatter: index_add") {
  Tensor src = seq({3, 2}) + 1;  // [[1, 2], [3, 4], [5, 6]]
  // Rows 0 and 2 of src go to row 0, row 1 to row 2: [[6, 8], [0, 0], [3, 4]].
  check_close(zeros({3, 2}, kDouble).index_add(0, longs({0, 2, 0}), src), {6, 8, 0, 0, 3, 4});
  check_close(zeros({3, 2}, kDouble).index_add(0, longs({0, 2, 0}), src, 2), {12, 16, 0, 0, 6, 8});
  check_close(ones({2, 3}, kDouble).index_add(1, tensor({2, 2}, kInt), seq({2, 2})), {1, 1, 2, 1, 1, 6});
  check_close(zeros({3}, kDouble).index_add(0, tensor(int64_t{1}), tensor(2.0, kDouble)), {0, 2, 0});
  check_close(tensor(1.0, kDouble).index_add(0, longs({0}), tensor(2.0, kDouble)), {3});
  check_close(seq({2, 3}).t().index_add(0, longs({1}), from_values({10, 20}, {1, 2})), {0, 3, 11, 24, 2, 5});
  check_close(zeros({2}, kLong).index_add(0, longs({1, 1}), tensor({3, 4}), 2), {0, 14});
  check_close(zeros({2}, kBool).index_add(0, longs({1}), tensor({true})), {0, 1});
  check_close(seq({2}).index_add(0, longs({}), zeros({0}, kDouble)), {0, 1});
  Tensor x = zeros({3}, kDouble);
  uint32_t v = x._version();
  Tensor& same = x.index_add_(0, longs({2, 2}), from_values({1, 2}, {2}), -1);
  CHECK(same.is_same(x));
  CHECK(x._version() > v);
  check_close(x, {0, 0, -3});
}

TEST_CASE("test_scatter: index_add errors and gradients") {
  Tensor x = zeros({3, 4});
  check_error(
      [&] {
        x.index_add(0, longs2({0}, {1, 1}), ones({1, 4}));
      },
      "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 1]");
  check_error(
      [&] {
        x.index_add(0, from_values({0}, {1}), ones({1, 4}));
      },
      "index_add_(): Expected dtype int32/int64 for index but got: Double");
  check_error(
      [&] {
        x.index_add(0, longs({0}), ones({1, 4}, kDouble));
      },
      "index_add_(): self (Float) and source (Double) must have the same scalar type");
  check_error(
      [&] {
        x.index_add(0, longs({0, 1}), ones({1, 4}));
      },
      "index_add_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 0");
  check_error(
      [&] {
        x.index_add(0, longs({0}), ones({1, 5}));
      },
      "index_add_(): source tensor shape must match self tensor shape, excluding the specified dimension. "
      "Got "
      "self.shape = [3, 4] source.shape = [1, 5]");
  check_error([&] { x.index_add(0, longs({3}), ones({1, 4})); }, "index out of range in self");
  check_error([&] { x.index_add_(0, longs({-1}), ones({1, 4})); }, "index out of range in self");
  Tensor idx = longs({2, 0, 2});
  check_grad([idx](const TensorList& t) { return t[0].index_add(0, idx, t[1], 2.5); },
             {rand_leaf({3, 2}), rand_leaf({3, 2})});
  check_grad([idx](const TensorList& t) { return t[0].t().index_add(1, idx, t[1]); },
             {rand_leaf({4, 2}), rand_leaf({2, 3})});
  check_grad([](const TensorList& t) { return t[0].index_add(0, longs({1}), t[1]); },
             {rand_leaf({3}), rand_leaf({})});
  check_gradgrad([idx](const TensorList& t) { return (t[0] * t[0]).index_add(0, idx, t[1] * t[1], -1); },
                 {rand_leaf({3}), rand_leaf({3})});
  Tensor self = rand_leaf({2}), src = rand_leaf({2});
  Tensor out = self.index_add(0, longs({1, 1}), src, 3);
  CHECK(out.grad_fn()->name() == "IndexAddBackward0");
  (out * from_values({1, 2}, {2})).sum().backward();
  check_close(self.grad(), {1, 2});
  check_close(src.grad(), {6, 6});  // alpha * grad[1] for both source rows
}
