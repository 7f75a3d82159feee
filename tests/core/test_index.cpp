// Indexing: Slice/TensorIndex, x.index({...}) basic (views) and advanced (copies),
// index_put_ / index_put (accumulate), the vector<optional<Tensor>> forms, index_select,
// masked_select and nonzero. Values are hand-computed from seq() (0, 1, 2, ... row-major).
#include <limits>

#include "op_check.h"

using namespace ember;
using namespace ember::indexing;
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
Tensor mask(const std::vector<double>& v, IntArrayRef s) { return from_values(v, s, kBool); }
}  // namespace

TEST_CASE("test_index: Slice and TensorIndex") {
  Slice all;
  CHECK(all.start() == 0);
  CHECK(all.stop() == std::numeric_limits<int64_t>::max());
  CHECK(all.step() == 1);
  Slice s(1, None, 2);
  CHECK(s.start() == 1);
  CHECK(s.step() == 2);
  Slice back(None, None, -1);  // Python's defaults for a negative step
  CHECK(back.start() == std::numeric_limits<int64_t>::max());
  CHECK(back.stop() == std::numeric_limits<int64_t>::min());
  check_error([] { Slice(0, 3, 0); }, "slice step cannot be zero");
  CHECK(TensorIndex("...").is_ellipsis());
  CHECK(TensorIndex(None).is_none());
  CHECK(TensorIndex(3).integer() == 3);
  CHECK(TensorIndex(true).is_boolean());
  CHECK(TensorIndex(Slice()).is_slice());
  CHECK(TensorIndex(longs({1})).is_tensor());
  check_error([] { TensorIndex(".."); }, "Expected \"...\" to represent an ellipsis index, but got \"..\"");
}

TEST_CASE("test_index: basic indexing values") {
  Tensor x = seq({3, 4});  // rows [0..3], [4..7], [8..11]
  check_close(x.index({1}), {4, 5, 6, 7});
  check_close(x.index({Slice(), Slice(1, 3)}), {1, 2, 5, 6, 9, 10});
  check_close(x.index({Slice(None, None, 2), Slice(1, None, 2)}), {1, 3, 9, 11});
  check_close(x.index({-1, Slice(-2)}), {10, 11});
  check_close(x.index({Slice(1, 100), Slice(-100, 2)}), {4, 5, 8, 9});  // clamped as in Python
  CHECK(shape(x.index({Slice(2, 1)})) == Shape{0, 4});
  CHECK(shape(x.index({None, 0})) == Shape{1, 4});
  Tensor mid = x.index({Slice(), None, 1});
  CHECK(shape(mid) == Shape{3, 1});
  check_close(mid, {1, 5, 9});
  check_close(x.index({Ellipsis, 1}), {1, 5, 9});
  CHECK(shape(x.index({"...", None})) == Shape{3, 4, 1});
  CHECK(shape(x.index({None, Ellipsis, None})) == Shape{1, 3, 4, 1});
  check_close(seq({2, 3, 2}).index({0, Ellipsis, 1}), {1, 3, 5});
  // A bool adds a dim of size 1 (true) or 0 (false); a 0-dim bool tensor acts the same.
  CHECK(shape(x.index({true})) == Shape{1, 3, 4});
  CHECK(shape(x.index({false})) == Shape{0, 3, 4});
  CHECK(shape(x.index({tensor(true)})) == Shape{1, 3, 4});
  Tensor t0 = x.index({true, 0});
  CHECK(shape(t0) == Shape{1, 4});
  check_close(t0, {0, 1, 2, 3});
  // 0-dim tensors.
  Tensor s = tensor(5.0);
  CHECK(shape(s.index({None})) == Shape{1});
  CHECK(shape(s.index({Ellipsis})) == Shape{});
  CHECK(shape(s.index({true})) == Shape{1});
  // Integer dtypes.
  check_close(seq({3, 4}, kInt).index({2, Slice(1, 3)}), {9, 10});
  CHECK(seq({3, 4}, kInt).index({0}).dtype() == kInt);
}

TEST_CASE("test_index: basic indexing gives views") {
  Tensor x = seq({3, 4});
  Tensor row = x.index({1});
  CHECK(row.is_alias_of(x));
  uint32_t v = x._version();
  row.fill_(-1);
  CHECK(x._version() > v);
  CHECK(row._version() == x._version());
  check_close(x.index({1}), {-1, -1, -1, -1});
  Tensor col = x.index({Slice(None, None, 2), 3});
  CHECK(col.strides().vec() == Shape{8});
  col.fill_(100);
  CHECK(x.index({2, 3}).item<double>() == 100);
  // Nothing indexed still gives a new tensor sharing storage.
  Tensor alias = x.index({Ellipsis});
  CHECK_FALSE(alias.is_same(x));
  CHECK(alias.is_alias_of(x));
  CHECK(x.index({}).is_alias_of(x));
  // A 0-dim integer tensor acts as a Python int: a view.
  Tensor r = x.index({tensor(int64_t{0})});
  CHECK(r.is_alias_of(x));
  check_close(r, {0, 1, 2, 100});
  // Index tensors copy.
  CHECK_FALSE(x.index({longs({0})}).is_alias_of(x));
}

TEST_CASE("test_index: advanced indexing values") {
  Tensor x = seq({3, 4});
  check_close(x.index({longs({0, 2})}), {0, 1, 2, 3, 8, 9, 10, 11});
  Tensor c = x.index({Slice(), longs({3, 0, 3})});
  CHECK(shape(c) == Shape{3, 3});
  check_close(c, {3, 0, 3, 7, 4, 7, 11, 8, 11});
  check_close(x.index({longs({0, 2}), longs({1, 3})}), {1, 11});  // x[0,1], x[2,3]
  check_close(x.index({longs({-1, -3})}), {8, 9, 10, 11, 0, 1, 2, 3});
  check_close(x.index({longs({1, 1})}), {4, 5, 6, 7, 4, 5, 6, 7});
  check_close(x.index({tensor({2, 0}, kInt)}), {8, 9, 10, 11, 0, 1, 2, 3});  // int32 indices
  // Index tensors broadcast: rows {{0},{2}} with cols {1,3} -> [[x01, x03], [x21, x23]].
  Tensor b = x.index({tensor({{0}, {2}}), longs({1, 3})});
  CHECK(shape(b) == Shape{2, 2});
  check_close(b, {1, 3, 9, 11});
  // A 2-d index tensor: its shape replaces the indexed dim.
  CHECK(shape(x.index({tensor({{0, 1}, {1, 0}})})) == Shape{2, 2, 4});
  // Empty index tensors give empty results.
  CHECK(shape(x.index({longs({})})) == Shape{0, 4});
  CHECK(shape(x.index({Slice(), longs({})})) == Shape{3, 0});
  CHECK(x.index({longs({0})}).dtype() == kDouble);
  check_close(seq({3}, kLong).index({longs({2, 0})}), {2, 0});
  CHECK(tensor({true, false, true}).index({longs({1, 2})}).dtype() == kBool);
}

TEST_CASE("test_index: advanced index placement (numpy's rule)") {
  Tensor x = seq({2, 3, 4});  // x[i, j, k] = 12 i + 4 j + k
  // Separated by a slice: the index dims go first. r[i, j] = x[a[i], j, b[i]].
  Tensor r = x.index({longs({0, 1}), Slice(), longs({1, 2})});
  CHECK(shape(r) == Shape{2, 3});
  check_close(r, {1, 5, 9, 14, 18, 22});
  // Adjacent after a slice: they stay in place. r[a, i] = x[a, p[i], q[i]].
  Tensor s = x.index({Slice(), longs({0, 1}), longs({1, 2})});
  CHECK(shape(s) == Shape{2, 2});
  check_close(s, {1, 6, 13, 18});
  // None between two index tensors separates them too: [2] + [1, 4].
  Tensor n = x.index({longs({0, 1}), None, longs({1, 2})});
  CHECK(shape(n) == Shape{2, 1, 4});
  check_close(n, {4, 5, 6, 7, 20, 21, 22, 23});
  // Ellipsis before an index tensor; an index tensor after an integer.
  check_close(x.index({Ellipsis, longs({3})}), {3, 7, 11, 15, 19, 23});
  check_close(x.index({1, longs({2, 0})}), {20, 21, 22, 23, 12, 13, 14, 15});
  // The vector<optional<Tensor>> form: undefined entries are full slices.
  check_close(index(x, {std::nullopt, longs({2})}), {8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(shape(index(x, {longs({0, 1}), std::nullopt, longs({0, 0})})) == Shape{2, 3});
}

TEST_CASE("test_index: boolean masks") {
  Tensor x = seq({3, 4});
  check_close(x.index({mask({1, 0, 1}, {3})}), {0, 1, 2, 3, 8, 9, 10, 11});
  // A full mask selects like nonzero, in row-major order.
  Tensor m = mask({0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0}, {3, 4});
  check_close(x.index({m}), {1, 6, 7, 8});
  check_close(x.index({Slice(), mask({1, 0, 0, 1}, {4})}), {0, 3, 4, 7, 8, 11});
  check_close(x.index({from_values({0, 1, 1}, {3}, kByte)}), {4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(shape(x.index({mask({0, 0, 0}, {3})})) == Shape{0, 4});
  // A 2-d mask consumes two dims, so a following index applies to the third (as numpy and
  // later PyTorch; PyTorch 1.13's C++ indexing moved only one dim and raised here).
  Tensor y = seq({2, 3, 4});
  Tensor m2 = mask({1, 0, 0, 0, 1, 1}, {2, 3});
  check_close(y.index({m2, 1}), {1, 17, 21});  // y[0,0,1], y[1,1,1], y[1,2,1]
  Tensor sl = y.index({m2, Slice(2)});
  CHECK(shape(sl) == Shape{3, 2});
  check_close(sl, {2, 3, 18, 19, 22, 23});
  check_close(y.index({Slice(), m2.index({0})}), {0, 1, 2, 3, 12, 13, 14, 15});
}

TEST_CASE("test_index: indexing errors") {
  Tensor x = seq({3, 4});
  check_error([&] { x.index({5}); }, "index 5 is out of bounds for dimension 0 with size 3");
  check_error([&] { x.index({Slice(), 4}); }, "index 4 is out of bounds for dimension 1 with size 4");
  check_error([&] { x.index({-4}); }, "index -4 is out of bounds for dimension 0 with size 3");
  check_error([&] { x.index({longs({5})}); }, "index 5 is out of bounds for dimension 0 with size 3");
  // As libtorch, a tensor index's error names its position among the index tensors.
  check_error(
      [&] {
        x.index({Slice(), longs({7})});
      },
      "index 7 is out of bounds for dimension 0 with size 4");
  check_error([&] { x.index({longs({-4})}); }, "index -4 is out of bounds for dimension 0 with size 3");
  check_error([] { zeros({0}).index({longs({0})}); }, "index is out of bounds for dimension with size 0");
  check_error([&] { x.index({0, 0, 0}); }, "too many indices for tensor of dimension 2");
  check_error([&] { x.index({mask({1, 0, 1}, {3}), 0, 0}); }, "too many indices for tensor of dimension 2");
  check_error(
      [&] {
        index(x, {longs({0}), longs({0}), longs({0})});
      },
      "too many indices for tensor of dimension 2 (got 3)");
  check_error([] { tensor(1.0).index({0}); }, "invalid index of a 0-dim tensor. Use `tensor.item()`");
  check_error([&] { x.index({from_values({0}, {1})}); },
              "tensors used as indices must be long, int, byte or bool tensors");
  check_error(
      [&] {
        x.index({mask({1, 0}, {2})});
      },
      "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index "
      "0");
  check_error(
      [&] {
        x.index({Slice(), mask({1, 0}, {2})});
      },
      "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index "
      "1");
  check_error(
      [&] {
        x.index({longs({0, 1}), longs({0, 1, 2})});
      },
      "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  check_error([&] { x.index({Slice(None, None, -1)}); }, "step must be greater than zero");
  check_error([&] { x.index({Ellipsis, 0, Ellipsis}); }, "an index can only have a single ellipsis ('...')");
}

TEST_CASE("test_index: index_put_ with TensorIndex") {
  Tensor x = zeros({3, 4});
  uint32_t v = x._version();
  x.index_put_({0}, 5);
  CHECK(x._version() > v);
  x.index_put_({Slice(), 1}, tensor({1.f, 2.f, 3.f}));
  x.index_put_({2, Slice(2)}, ones({1, 2}));  // leading size-1 dims of the value are dropped
  check_close(x, {5, 1, 5, 5, 0, 2, 0, 0, 0, 3, 1, 1});
  x.index_put_({Ellipsis}, 0);
  check_close(x.sum(), {0});
  // Advanced: the value broadcasts to the indexing result [2, 4].
  x.index_put_({longs({0, 2})}, tensor({1.f, 2.f, 3.f, 4.f}));
  check_close(x, {1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4});
  x.index_put_({mask({0, 1, 0}, {3}), longs({1, 3})}, -1);
  check_close(x.index({1}), {0, -1, 0, -1});
  // Basic indexing casts the value (a copy_); index tensors need the same dtype, as libtorch.
  x.index_put_({0}, ones({4}, kDouble) * 7);
  check_close(x.index({0}), {7, 7, 7, 7});
  check_error([&] { x.index_put_({longs({0})}, ones({4}, kDouble)); },
              "Index put requires the source and destination dtypes match, got Float for the destination and "
              "Double for "
              "the source.");
  check_error(
      [&] { x.index_put_({longs({0})}, ones({2})); },
      "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [1, 4]");
  // Writing into a non-contiguous tensor and into an integer tensor.
  Tensor b = seq({2, 3});
  b.t().index_put_({longs({2})}, tensor({-1.0, -2.0}, kDouble));  // column 2 of b
  check_close(b, {0, 1, -1, 3, 4, -2});
  Tensor i = zeros({4}, kLong);
  i.index_put_({longs({1, 3})}, 9);
  check_close(i, {0, 9, 0, 9});
  Tensor bits = zeros({3}, kBool);
  bits.index_put_({mask({1, 0, 1}, {3})}, true);
  check_close(bits, {1, 0, 1});
}

TEST_CASE("test_index: index_put with index tensor lists") {
  Tensor z = zeros({3});
  // Accumulate sums repeated indices: 1 + 2 at 0, 3 at 2.
  check_close(index_put_(z, {longs({0, 0, 2})}, tensor({1.f, 2.f, 3.f}), true), {3, 0, 3});
  check_close(z, {3, 0, 3});
  check_close(index_put(zeros({3}), {longs({0, 0, 2})}, tensor(1.f), true), {2, 0, 1});
  check_close(index_put(zeros({3}, kBool), {longs({0, 0})}, tensor({true, false}), true), {1, 0, 0});
  check_close(index_put(zeros({3}, kLong), {longs({1, 1, 1})}, tensor(int64_t{2}), true), {0, 6, 0});
  // Out of place leaves self alone.
  Tensor s = seq({2, 2});
  Tensor r = index_put(s, {longs({1}), longs({0})}, tensor(9.0, kDouble));
  check_close(r, {0, 1, 9, 3});
  check_close(s, {0, 1, 2, 3});
  check_close(index_put(s, {std::nullopt, longs({1})}, from_values({5, 6}, {2, 1}), true), {0, 6, 2, 9});
  // Empty index: nothing written.
  check_close(index_put(s, {longs({})}, tensor(1.0, kDouble)), {0, 1, 2, 3});
  check_error([&] { index_put(s, {longs({2})}, tensor(1.0, kDouble)); },
              "index 2 is out of bounds for dimension 0 with size 2");
  // Unlike Tensor::index_put_ (libtorch's set_item), the list form keeps the value's leading 1s.
  check_error(
      [&] {
        index_put_(s, {longs({0})}, ones({1, 1, 2}, kDouble));
      },
      "shape mismatch: value tensor of shape [1, 1, 2] cannot be broadcast to indexing result of shape [1, "
      "2]");
  s.index_put_({longs({0})}, ones({1, 1, 2}, kDouble));
  check_close(s, {1, 1, 2, 3});
}

TEST_CASE("test_index: gradients of index") {
  // Basic indexing (views).
  check_grad(
      [](const TensorList& t) {
        return t[0].index({Slice(1), Slice(None, None, 2)});
      },
      {rand_leaf({3, 4})});
  check_grad([](const TensorList& t) { return t[0].index({0, None, Ellipsis, -1}); }, {rand_leaf({2, 3, 4})});
  // Advanced, with repeated indices: each row's gradient counts its uses.
  Tensor x = rand_leaf({3, 2});
  x.index({longs({0, 2, 0, 0})}).sum().backward();
  check_close(x.grad(), {3, 3, 0, 0, 1, 1});
  check_grad([](const TensorList& t) { return t[0].index({longs({0, 2, 0})}); }, {rand_leaf({3, 2})});
  check_grad(
      [](const TensorList& t) {
        return t[0].index({tensor({{1}, {1}}), Slice(), longs({0, 2, 2})});
      },
      {rand_leaf({2, 2, 3})});
  check_grad([](const TensorList& t) { return t[0].t().index({mask({1, 0, 1}, {3})}); }, {rand_leaf({2, 3})});
  check_grad(
      [](const TensorList& t) {
        return t[0].index({mask({1, 0, 1, 1}, {2, 2})});
      },
      {rand_leaf({2, 2})});
  check_gradgrad(
      [](const TensorList& t) {
        return (t[0] * t[0]).index({longs({1, 1, 0})});
      },
      {rand_leaf({2, 2})});
  Tensor y = rand_leaf({3}).index({longs({0})});
  CHECK(y.grad_fn()->name() == "IndexBackward0");
}

TEST_CASE("test_index: gradients of index_put") {
  Tensor idx = longs({2, 0, 2});
  // Overwrite: self's gradient is zero where written; value's is grad at those positions.
  Tensor self = rand_leaf({3, 2}), value = rand_leaf({2});
  Tensor out = index_put(self, {longs({0, 2})}, value);
  CHECK(out.grad_fn()->name() == "IndexPutBackward0");
  (out * from_values({1, 2, 3, 4, 5, 6}, {3, 2})).sum().backward();
  check_close(self.grad(), {0, 0, 3, 4, 0, 0});
  check_close(value.grad(), {1 + 5, 2 + 6});  // value broadcast over rows 0 and 2
  check_grad([](const TensorList& t) { return index_put(t[0], {longs({1})}, t[1]); },
             {rand_leaf({3, 2}), rand_leaf({2})});
  check_grad([idx](const TensorList& t) { return index_put(t[0], {idx}, t[1], true); },
             {rand_leaf({3, 2}), rand_leaf({3, 2})});
  check_grad(
      [](const TensorList& t) {
        return index_put(t[0].t(), {std::nullopt, longs({1, 0})}, t[1], true);
      },
      {rand_leaf({3, 2}), rand_leaf({2, 2})});
  check_gradgrad([idx](const TensorList& t) { return index_put(t[0] * t[0], {idx}, t[1] * t[1], true); },
                 {rand_leaf({3}), rand_leaf({3})});
  // In place through TensorIndex on a non-leaf: writes go through the view (CopySlices).
  check_grad(
      [](const TensorList& t) {
        Tensor y = t[0] * 1.0;
        y.index_put_({Slice(), 1}, t[1]);
        y.index_put_({longs({0})}, t[1].index({Slice(None, 1)}) * 2);
        return y;
      },
      {rand_leaf({2, 3}), rand_leaf({2})});
  Tensor leaf = rand_leaf({2});
  check_error([&] { leaf.index_put_({0}, 1.0); },
              "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  check_error([&] { leaf.index_put_({longs({0})}, 1.0); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("test_index: index_select") {
  Tensor x = seq({3, 4});
  check_close(x.index_select(0, longs({2, 0, 2})), {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  check_close(x.index_select(1, longs({3, 1})), {3, 1, 7, 5, 11, 9});
  check_close(x.index_select(-1, tensor({0}, kInt)), {0, 4, 8});
  check_close(x.t().index_select(0, longs({1})), {1, 5, 9});           // non-contiguous
  CHECK(shape(x.index_select(0, tensor(int64_t{1}))) == Shape{1, 4});  // a 0-dim index acts as [1]
  CHECK(shape(x.index_select(1, longs({}))) == Shape{3, 0});
  Tensor s = tensor(5.0).index_select(0, longs({0}));
  CHECK(shape(s) == Shape{});
  check_close(s, {5});
  check_close(seq({4}, kLong).index_select(0, longs({3, 3})), {3, 3});
  CHECK(seq({4}, kLong).index_select(0, longs({3})).dtype() == kLong);
  check_error([&] { x.index_select(0, longs({3})); }, "index out of range in self");
  check_error([&] { x.index_select(0, longs({-1})); }, "index out of range in self");
  check_error([&] { x.index_select(0, tensor({{0}})); }, "index_select(): Index is supposed to be a vector");
  check_error([&] { x.index_select(0, from_values({0}, {1})); },
              "index_select(): Expected dtype int32 or int64 for index");
  check_error(
      [] {
        tensor(5.0).index_select(0, longs({0, 0}));
      },
      "index_select(): Index to scalar can have only 1 value, got 2 value(s)");
  check_error([&] { x.index_select(2, longs({0})); }, "Dimension out of range");
  check_grad([](const TensorList& t) { return t[0].index_select(1, longs({2, 0, 2})); }, {rand_leaf({2, 3})});
  check_grad(
      [](const TensorList& t) {
        return t[0].t().index_select(0, longs({1, 1}));
      },
      {rand_leaf({3, 2})});
  check_grad([](const TensorList& t) { return t[0].index_select(0, longs({0})); }, {rand_leaf({})});
  check_gradgrad(
      [](const TensorList& t) {
        return (t[0] * t[0]).index_select(0, longs({1, 0, 1}));
      },
      {rand_leaf({2, 2})});
  Tensor y = rand_leaf({3}).index_select(0, longs({0}));
  CHECK(y.grad_fn()->name() == "IndexSelectBackward0");
}

TEST_CASE("test_index: index_select of views with huge strides") {
  // as_strided takes any stride on a dim of an empty tensor or a dim of one element, where its
  // size in bytes can overflow int64; index_select's byte step of that dim did (fuzz_ops under
  // UBSan). It never steps along such a dim: PyTorch's empty and ordinary results.
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  Tensor e = empty({0}).as_strided({0, 2}, {huge, 1});
  CHECK(shape(e.index_select(0, longs({}))) == Shape{0, 2});
  CHECK(shape(e.index_select(1, longs({1, 0, 1}))) == Shape{0, 3});
  Tensor f = empty({0}).as_strided({2, 0}, {1, huge});
  CHECK(shape(f.index_select(1, longs({}))) == Shape{2, 0});
  CHECK(shape(f.index_select(0, longs({1, 1, 0}))) == Shape{3, 0});
  Tensor one = seq({2}).as_strided({1, 2}, {huge, 1});
  check_close(one.index_select(0, longs({0, 0})), {0, 1, 0, 1});
  check_close(one.index_select(1, longs({1})), {1});
}

TEST_CASE("test_index: masked_select") {
  Tensor x = seq({2, 3});
  check_close(x.masked_select(mask({1, 0, 1, 0, 1, 1}, {2, 3})), {0, 2, 4, 5});
  // Broadcasting: x [3] against mask [2, 1] gives [2, 3]; the true row appears once.
  Tensor r = seq({3}).masked_select(mask({0, 1}, {2, 1}));
  CHECK(shape(r) == Shape{3});
  check_close(r, {0, 1, 2});
  // mask [3] against x [2, 3]: both rows.
  check_close(x.masked_select(mask({0, 1, 1}, {3})), {1, 2, 4, 5});
  check_close(x.t().masked_select(mask({1, 0, 0, 1, 1, 0}, {3, 2})), {0, 4, 2});
  CHECK(shape(x.masked_select(mask({0, 0, 0}, {3}))) == Shape{0});
  check_close(seq({3}, kLong).masked_select(from_values({1, 0, 1}, {3}, kByte)), {0, 2});
  check_error(
      [&] {
        x.masked_select(ones({2, 3}));
      },
      "masked_select: expected BoolTensor or ByteTensor for mask");
  check_error(
      [&] {
        x.masked_select(mask({1, 0}, {2}));
      },
      "The size of tensor a (3) must match the size of tensor b (2)");
  Tensor m = mask({1, 0, 1, 1, 1, 0}, {2, 3});
  check_grad([m](const TensorList& t) { return t[0].masked_select(m); }, {rand_leaf({2, 3})});
  // The gradient of a broadcast input sums over the rows the mask picked it in.
  Tensor leaf = rand_leaf({3});
  leaf.masked_select(m).sum().backward();
  check_close(leaf.grad(), {2, 1, 1});
  check_grad([m](const TensorList& t) { return t[0].masked_select(m); }, {rand_leaf({3})});
  check_gradgrad([m](const TensorList& t) { return (t[0] * t[0]).masked_select(m); }, {rand_leaf({2, 3})});
}

TEST_CASE("test_index: nonzero") {
  Tensor n = tensor({1, 0, 2}).nonzero();
  CHECK(n.dtype() == kLong);
  CHECK(shape(n) == Shape{2, 1});
  check_close(n, {0, 2});
  Tensor m = from_values({0, 3, 0, 4, 0, 5}, {2, 3}).nonzero();  // (0,1), (1,0), (1,2)
  CHECK(shape(m) == Shape{3, 2});
  check_close(m, {0, 1, 1, 0, 1, 2});
  check_close(from_values({0, 3, 0, 4, 0, 5}, {2, 3}).t().nonzero(), {0, 1, 1, 0, 2, 1});
  CHECK(shape(tensor(3.0).nonzero()) == Shape{1, 0});
  CHECK(shape(tensor(0.0).nonzero()) == Shape{0, 0});
  CHECK(shape(zeros({0, 2}).nonzero()) == Shape{0, 2});
  check_close(tensor({false, true}).nonzero(), {1});
  check_close(from_values({0.5, 0, -1}, {3}, kHalf).nonzero(), {0, 2});
  check_close(nonzero(from_values({0, 1, 1, 0}, {2, 2, 1})), {0, 1, 0, 1, 0, 0});
  CHECK_FALSE(rand_leaf({2}).nonzero().requires_grad());
}
