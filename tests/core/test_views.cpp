// View ops (core/ops/views.cpp): values, aliasing (a write through the view changes the base
// and bumps the version counter both share), PyTorch's error texts, and gradients.
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

double total(const Tensor& t) { return t.sum().item<double>(); }

/// `view` shares base's storage: adding 1 through it adds view.numel() to base's sum (each
/// view element is a distinct base element) and bumps the version counter they share.
void check_writes_through(const Tensor& base, Tensor view) {
  CHECK(view.is_alias_of(base));
  CHECK_FALSE(view.is_same(base));
  double before = total(base);
  uint32_t version = base._version();
  view.add_(1);
  CHECK(total(base) == doctest::Approx(before + static_cast<double>(view.numel())));
  CHECK(base._version() > version);
  CHECK(view._version() == base._version());
  view.sub_(1);  // put base back as it was
}
}  // namespace

TEST_CASE("test_views: view, reshape, flatten, unflatten") {
  Tensor x = seq({2, 3});
  Tensor v = x.view({3, 2});
  CHECK(shape(v) == Shape{3, 2});
  check_close(v, {0, 1, 2, 3, 4, 5});
  check_writes_through(x, v);
  CHECK(shape(x.view({-1})) == Shape{6});
  CHECK(shape(x.view({1, -1, 2})) == Shape{1, 3, 2});
  CHECK(shape(tensor(1.0).view({1, 1})) == Shape{1, 1});
  CHECK(shape(zeros({0, 3}).view({3, 0})) == Shape{3, 0});
  check_error(
      [] {
        zeros({0, 3}).view({3, 0, -1});
      },
      "cannot reshape tensor of 0 elements into shape [3, 0, -1] because the unspecified dimension size -1 "
      "can "
      "be any value and is ambiguous");
  // Viewing a transposed tensor works where strides allow (a split of one dim) ...
  Tensor y = seq({4, 6}).t();  // sizes [6, 4], strides [1, 6]
  CHECK(y.view({2, 3, 4}).strides().vec() == Shape{3, 1, 6});
  // ... and not where a new dim would span two strided dims.
  check_error(
      [] {
        arange(12).view({3, 4}).t().view({12});
      },
      "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
      "two "
      "contiguous subspaces). Use .reshape(...) instead.");
  check_error([] { zeros({6}).view({4}); }, "shape '[4]' is invalid for input of size 6");
  check_error([] { zeros({6}).view({-1, -1}); }, "only one dimension can be inferred");
  // reshape: a view when possible, a copy otherwise.
  Tensor r = x.reshape({6});
  CHECK(r.is_alias_of(x));
  Tensor c = x.t().reshape({6});
  CHECK_FALSE(c.is_alias_of(x));
  check_close(c, {0, 3, 1, 4, 2, 5});
  check_error([] { zeros({2, 3}).reshape({5}); }, "shape '[5]' is invalid for input of size 6");
  // flatten / unflatten.
  Tensor z = seq({2, 3, 4});
  CHECK(shape(z.flatten()) == Shape{24});
  CHECK(shape(z.flatten(1)) == Shape{2, 12});
  CHECK(shape(z.flatten(0, 1)) == Shape{6, 4});
  CHECK(shape(z.flatten(-2, -1)) == Shape{2, 12});
  CHECK(shape(tensor(2.0).flatten()) == Shape{1});
  check_writes_through(z, z.flatten(1));
  check_close(z.transpose(0, 2).flatten(), z.transpose(0, 2).contiguous().view({-1}));
  check_error([&] { z.flatten(2, 1); }, "flatten() has invalid args: start_dim cannot come after end_dim");
  CHECK(shape(z.unflatten(2, {2, 2})) == Shape{2, 3, 2, 2});
  CHECK(shape(z.unflatten(-1, {-1, 2})) == Shape{2, 3, 2, 2});
  check_writes_through(z, z.unflatten(1, {3, 1}));
  check_error(
      [] {
        zeros({2, 3}).unflatten(1, {2, 2});
      },
      "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor");
  check_error([] { zeros({2, 3}).unflatten(1, {}); }, "unflatten: sizes must be non-empty");
  check_error(
      [] {
        zeros({2, 3}).unflatten(1, {-1, 2});
      },
      "unflatten: Provided sizes [-1, 2] don't multiply up to the size of dim 1 (3) in the input tensor");
  // Gradients (a non-contiguous input goes through reshape's copy).
  check_grad([](const TensorList& t) { return t[0].view({3, 2}); }, {rand_leaf({2, 3})});
  check_grad([](const TensorList& t) { return t[0].t().reshape({6}); }, {rand_leaf({2, 3})});
  check_grad(
      [](const TensorList& t) {
        return t[0].flatten(1).unflatten(1, {2, 3});
      },
      {rand_leaf({2, 3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).view({-1}); }, {rand_leaf({2, 2})});
}

TEST_CASE("test_views: squeeze and unsqueeze") {
  Tensor x = seq({2, 1, 3, 1});
  CHECK(shape(x.squeeze()) == Shape{2, 3});
  CHECK(shape(x.squeeze(1)) == Shape{2, 3, 1});
  CHECK(shape(x.squeeze(-1)) == Shape{2, 1, 3});
  CHECK(shape(x.squeeze(0)) == Shape{2, 1, 3, 1});  // not size 1: unchanged
  CHECK(shape(tensor(1.0).squeeze(0)) == Shape{});
  check_writes_through(x, x.squeeze());
  check_writes_through(x, x.squeeze(0));
  Tensor y = seq({2, 3});
  CHECK(shape(y.unsqueeze(0)) == Shape{1, 2, 3});
  CHECK(shape(y.unsqueeze(-1)) == Shape{2, 3, 1});
  CHECK(y.unsqueeze(2).strides().vec() == Shape{3, 1, 1});
  // torch.zeros(2, 3).t().unsqueeze(0).stride() == (3, 1, 3)
  CHECK(y.t().unsqueeze(0).strides().vec() == Shape{3, 1, 3});
  CHECK(shape(tensor(1.0).unsqueeze(0)) == Shape{1});
  check_writes_through(y, y.unsqueeze(1));
  check_error([&] { y.unsqueeze(3); },
              "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  check_error([&] { y.squeeze(2); },
              "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_grad([](const TensorList& t) { return t[0].squeeze().unsqueeze(0); }, {rand_leaf({2, 1, 3})});
  check_grad([](const TensorList& t) { return t[0].t().unsqueeze(1).squeeze(2); }, {rand_leaf({3, 1})});
}

TEST_CASE("test_views: permute, transpose, t, movedim") {
  Tensor x = seq({2, 3, 4});  // x[i, j, k] = 12 i + 4 j + k
  Tensor p = x.permute({2, 0, 1});
  CHECK(shape(p) == Shape{4, 2, 3});
  CHECK(p.strides().vec() == Shape{1, 12, 4});
  CHECK(p.index({3, 1, 2}).item<double>() == 12 + 8 + 3);
  check_writes_through(x, p);
  CHECK(shape(x.permute({-1, -3, -2})) == Shape{4, 2, 3});
  check_error(
      [&] {
        x.permute({0, 1});
      },
      "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
      "desired "
      "ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2");
  check_error([&] { x.permute({0, 0, 1}); }, "permute(): duplicate dims are not allowed.");
  Tensor tr = x.transpose(0, 2);
  CHECK(shape(tr) == Shape{4, 3, 2});
  CHECK(tr.index({1, 2, 1}).item<double>() == 12 + 8 + 1);
  check_writes_through(x, tr);
  CHECK(shape(tensor(1.0).transpose(0, -1)) == Shape{});
  Tensor m = seq({2, 3});
  check_close(m.t(), {0, 3, 1, 4, 2, 5});
  CHECK(shape(seq({3}).t()) == Shape{3});
  CHECK(shape(tensor(1.0).t()) == Shape{});
  check_writes_through(m, m.t());
  check_error([&] { x.t(); }, "t() expects a tensor with <= 2 dimensions, but self is 3D");
  check_error([&] { x.transpose(0, 3); },
              "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  CHECK(shape(x.movedim(0, 2)) == Shape{3, 4, 2});
  CHECK(shape(x.movedim(-1, 0)) == Shape{4, 2, 3});
  CHECK(shape(x.movedim({0, 1}, {2, 0})) == Shape{3, 4, 2});
  CHECK(x.movedim(0, 2).index({2, 3, 1}).item<double>() == 12 + 8 + 3);
  check_writes_through(x, x.movedim(1, 0));
  check_error(
      [&] {
        x.movedim({0, 1}, {0});
      },
      "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number of "
      "dims as "
      "destination ([0] dims)");
  check_error([&] { x.movedim({0, 0}, {0, 1}); }, "movedim: repeated dim in `source` ([0, 0])");
  check_error([&] { x.movedim({0, 1}, {1, 1}); }, "movedim: repeated dim in `destination` ([1, 1])");
  check_grad([](const TensorList& t) { return t[0].permute({1, 2, 0}); }, {rand_leaf({2, 3, 2})});
  check_grad([](const TensorList& t) { return t[0].transpose(0, 1).t(); }, {rand_leaf({2, 3})});
  check_grad([](const TensorList& t) { return t[0].movedim({0, 2}, {1, 0}); }, {rand_leaf({2, 3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).permute({1, 0}); }, {rand_leaf({2, 3})});
}

TEST_CASE("test_views: expand") {
  Tensor x = seq({3, 1});
  Tensor e = x.expand({2, 3, 4});
  CHECK(shape(e) == Shape{2, 3, 4});
  CHECK(e.strides().vec() == Shape{0, 1, 0});
  CHECK(e.is_alias_of(x));
  check_close(e.index({1, 2}), {2, 2, 2, 2});
  CHECK(shape(x.expand({-1, 5})) == Shape{3, 5});
  CHECK(shape(tensor(1.0).expand({2, 2})) == Shape{2, 2});
  CHECK(shape(x.expand_as(zeros({3, 2}))) == Shape{3, 2});
  CHECK(shape(zeros({1, 2}).expand({0, 2})) == Shape{0, 2});
  x.fill_(4);  // a write to the base shows through the view
  check_close(e.index({0, 0}), {4, 4, 4, 4});
  CHECK(e._version() == x._version());
  check_error(
      [] {
        zeros({3, 2}).expand({3, 3});
      },
      "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 1.  "
      "Target "
      "sizes: [3, 3].  Tensor sizes: [3, 2]");
  check_error(
      [] {
        zeros({3, 2}).expand({3});
      },
      "expand(CPUFloatType{[3, 2]}, size=[3]): the number of sizes provided (1) must be greater or equal to "
      "the "
      "number of dimensions in the tensor (2)");
  check_error(
      [] {
        zeros({3, 2}).expand({-1, 3, 2});
      },
      "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
  // The gradient sums over the expanded dims.
  Tensor leaf = rand_leaf({3, 1});
  leaf.expand({2, 3, 4}).sum().backward();
  check_close(leaf.grad(), {8, 8, 8});
  check_grad([](const TensorList& t) { return t[0].expand({2, 3, 4}); }, {rand_leaf({3, 1})});
  check_grad([](const TensorList& t) { return t[0].t().expand({2, 2, 3}); }, {rand_leaf({3, 1})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).expand({3, 2}); }, {rand_leaf({2})});
}

TEST_CASE("test_views: as_strided") {
  Tensor x = seq({3, 3});
  Tensor d = x.as_strided({3}, {4});  // the diagonal
  check_close(d, {0, 4, 8});
  check_writes_through(x, d);
  check_close(x.as_strided({2, 2}, {3, 1}, 1), {1, 2, 4, 5});
  check_close(seq({4}).as_strided({2, 2}, {1, 1}), {0, 1, 1, 2});  // overlapping windows
  check_close(x.t().as_strided({2}, {1}), {0, 1});  // strides address the storage, not the view
  check_error(
      [] {
        zeros({3, 2}).as_strided({4}, {2});
      },
      "setStorage: sizes [4], strides [2], storage offset 0, and itemsize 4 requiring a storage size of 28 "
      "are "
      "out of bounds for storage of size 24");
  check_error([] { zeros({3, 2}).as_strided({2}, {1, 2}); }, "mismatch in length of strides and shape");
  check_grad([](const TensorList& t) { return t[0].as_strided({2, 2}, {1, 2}, 1); }, {rand_leaf({3, 2})});
  // Overlapping elements collect the gradient of every output that reads them.
  Tensor leaf = rand_leaf({4});
  leaf.as_strided({2, 2}, {1, 1}).sum().backward();
  check_close(leaf.grad(), {1, 2, 1, 0});
  check_grad([](const TensorList& t) { return t[0].as_strided({3, 2}, {1, 1}); }, {rand_leaf({4})});
  check_grad([](const TensorList& t) { return t[0].t().as_strided({2, 2}, {2, 1}); }, {rand_leaf({3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).as_strided({2}, {2}); }, {rand_leaf({2, 2})});
}

TEST_CASE("test_views: narrow, slice, select") {
  Tensor x = seq({3, 4});
  check_close(x.narrow(1, 1, 2), {1, 2, 5, 6, 9, 10});
  check_close(x.narrow(0, -1, 1), {8, 9, 10, 11});
  CHECK(shape(x.narrow(0, 3, 0)) == Shape{0, 4});
  check_writes_through(x, x.narrow(1, 1, 2));
  check_error([&] { x.narrow(0, 4, 1); },
              "start out of range (expected to be in range of [-3, 3], but got 4)");
  check_error([&] { x.narrow(0, 2, 2); }, "start (2) + length (2) exceeds dimension size (3).");
  check_error([&] { x.narrow(0, 0, -1); }, "narrow(): length must be non-negative.");
  check_error([] { tensor(1.0).narrow(0, 0, 1); }, "narrow() cannot be applied to a 0-dim tensor.");
  check_close(x.slice(1, 1, std::nullopt, 2), {1, 3, 5, 7, 9, 11});
  check_close(x.slice(0, -2), {4, 5, 6, 7, 8, 9, 10, 11});
  check_close(x.slice(1, -100, 100, 3), {0, 3, 4, 7, 8, 11});  // clamped
  CHECK(x.slice(0, 3).storage_offset() == 12);                    // empty, one past the end: PyTorch's offset
  // An empty slice one past the end of a dim with a huge stride: its offset in bytes would
  // overflow int64 (fuzz_ops, UBSan in data_ptr()); it keeps the input's.
  Tensor huge = x.as_strided({1}, {int64_t{1} << 62}, 1).slice(0, 1, 2);
  CHECK(huge.numel() == 0);
  CHECK(huge.storage_offset() == 1);
  (void)huge.data_ptr();
  // select of an empty view along such a dim: index * stride, or that offset in bytes,
  // overflowed int64 (the same family); the result keeps the input's offset.
  for (int64_t i : {2, 3}) {
    Tensor sel = empty({0}).as_strided({4, 0}, {std::numeric_limits<int64_t>::max() / 2, 1}).select(0, i);
    CHECK(shape(sel) == Shape{0});
    CHECK(sel.storage_offset() == 0);
    (void)sel.data_ptr();
  }
  CHECK(x.select(0, 2).storage_offset() == 8);  // a non-empty result: PyTorch's offset
  CHECK(shape(x.slice(1, 3, 1)) == Shape{3, 0});
  CHECK(x.slice(1, 0, 4, 2).strides().vec() == Shape{4, 2});
  check_writes_through(x, x.slice(1, 0, 4, 2));
  check_error([&] { x.slice(0, 0, 2, 0); }, "slice step must be positive");
  check_error([] { tensor(1.0).slice(0); }, "slice() cannot be applied to a 0-dim tensor.");
  check_close(x.select(1, -1), {3, 7, 11});
  check_close(x[2], {8, 9, 10, 11});
  CHECK(shape(x.select(0, 0).select(0, 1)) == Shape{});
  check_writes_through(x, x.select(0, 1));
  check_error([&] { x.select(0, 5); },
              "select(): index 5 out of range for tensor of size [3, 4] at dimension 0");
  check_error([&] { x.select(1, -5); },
              "select(): index -5 out of range for tensor of size [3, 4] at dimension 1");
  check_error([] { tensor(1.0).select(0, 0); }, "select() cannot be applied to a 0-dim tensor.");
  check_grad([](const TensorList& t) { return t[0].narrow(1, 1, 2); }, {rand_leaf({2, 4})});
  check_grad([](const TensorList& t) { return t[0].t().slice(0, 1, std::nullopt, 2); }, {rand_leaf({3, 5})});
  check_grad([](const TensorList& t) { return t[0].select(1, 2); }, {rand_leaf({2, 3})});
  check_grad([](const TensorList& t) { return t[0].t().select(0, 1); }, {rand_leaf({2, 3})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).slice(0, 0, 3, 2).select(1, 0); },
                 {rand_leaf({3, 2})});
}

TEST_CASE("test_views: chunk, split, unbind") {
  Tensor x = seq({5, 2});
  TensorList c = x.chunk(3);  // sizes 2, 2, 1
  REQUIRE(c.size() == 3);
  CHECK(shape(c[2]) == Shape{1, 2});
  check_close(c[1], {4, 5, 6, 7});
  check_writes_through(x, c[1]);
  CHECK(seq({6}).chunk(4).size() == 3);  // chunks of ceil(6 / 4) = 2
  CHECK(x.chunk(1, 1).size() == 1);
  TensorList e = zeros({0}).chunk(3);  // an empty dim gives `chunks` empty chunks
  REQUIRE(e.size() == 3);
  CHECK(shape(e[2]) == Shape{0});
  check_error([&] { x.chunk(0); }, "chunk expects `chunks` to be greater than 0, got: 0");
  check_error([] { tensor(1.0).chunk(2); }, "chunk expects at least a 1-dimensional tensor");
  TensorList s = x.split(2);
  REQUIRE(s.size() == 3);
  check_close(s[2], {8, 9});
  TensorList sw = x.split({1, 4});
  REQUIRE(sw.size() == 2);
  CHECK(shape(sw[1]) == Shape{4, 2});
  check_close(x.split_with_sizes({3, 0, 2})[2], {6, 7, 8, 9});
  check_writes_through(x, x.split(1, 1)[1]);
  TensorList z = zeros({0}).split(0);
  REQUIRE(z.size() == 1);
  CHECK(shape(z[0]) == Shape{0});
  check_error([&] { x.split(-1); }, "split expects split_size be non-negative, but got split_size=-1");
  check_error([&] { x.split(0); },
              "split_size can only be 0 if dimension size is 0, but got dimension size of 5");
  check_error(
      [&] {
        x.split({1, 1});
      },
      "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), but "
      "got "
      "split_sizes=[1, 1]");
  check_error(
      [&] {
        x.split({6, -1});
      },
      "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[6, -1]");
  TensorList u = x.unbind(1);
  REQUIRE(u.size() == 2);
  check_close(u[1], {1, 3, 5, 7, 9});
  check_writes_through(x, u[0]);
  CHECK(zeros({0, 3}).unbind().empty());
  check_error([&] { x.unbind(2); }, "Dimension out of range");
  // Each piece's gradient lands in its part of the input.
  check_grad([](const TensorList& t) { return t[0].chunk(2, 1)[1]; }, {rand_leaf({2, 3})});
  check_grad(
      [](const TensorList& t) {
        return t[0].split({1, 2})[1] * t[0].split({1, 2})[1];
      },
      {rand_leaf({3})});
  check_grad(
      [](const TensorList& t) {
        TensorList p = t[0].t().unbind(0);
        return p[0] * 2 + p[1];
      },
      {rand_leaf({3, 2})});
  Tensor leaf = rand_leaf({2, 2});
  TensorList rows = leaf.unbind();
  (rows[0] * 3).sum().backward();
  check_close(leaf.grad(), {3, 3, 0, 0});
}

TEST_CASE("test_views: diagonal") {
  Tensor x = seq({3, 4});  // [[0 1 2 3], [4 5 6 7], [8 9 10 11]]
  check_close(x.diagonal(), {0, 5, 10});
  check_close(x.diagonal(1), {1, 6, 11});
  check_close(x.diagonal(-1), {4, 9});
  // Strides near INT64_MAX (as_strided) on dims the diagonal never steps along: their sum and
  // the start offset overflowed int64 (UBSan). Empty input: an empty diagonal keeping the
  // input's offset; one element per dim: that element.
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;
  Tensor e = empty({0}).as_strided({2, 3, 0}, {big, big, 1});
  for (int64_t off : {1, -1}) {
    Tensor de = e.diagonal(off, 0, 1);
    CHECK(shape(de) == Shape{0, off > 0 ? 2 : 1});
    CHECK(de.storage_offset() == 0);
    (void)de.data_ptr();
  }
  check_close(from_values({7}, {1}).as_strided({1, 1}, {big, big}).diagonal(), {7});
  check_close(x.diagonal(0, 1, 0), {0, 5, 10});
  CHECK(shape(x.diagonal(5)) == Shape{0});
  CHECK(shape(x.diagonal(-3)) == Shape{0});
  Tensor y = seq({2, 3, 4});
  Tensor d = y.diagonal(0, 0, 2);  // d[j, i] = y[i, j, i]: remaining dims first, diagonal last
  CHECK(shape(d) == Shape{3, 2});
  check_close(d, {0, 13, 4, 17, 8, 21});
  check_writes_through(x, x.diagonal(1));
  check_error([&] { x.diagonal(0, 0, 0); }, "diagonal dimensions cannot be identical 0, 0");
  check_error([&] { x.diagonal(0, 0, 2); }, "Dimension out of range");
  check_grad([](const TensorList& t) { return t[0].diagonal(-1); }, {rand_leaf({3, 3})});
  check_grad([](const TensorList& t) { return t[0].t().diagonal(1, 1, 0); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& t) { return t[0].diagonal(0, -1, 0); }, {rand_leaf({2, 3, 2})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).diagonal(); }, {rand_leaf({2, 2})});
}

TEST_CASE("test_views: unfold") {
  Tensor x = seq({5});
  Tensor w = x.unfold(0, 2, 2);  // windows [0 1], [2 3]
  CHECK(shape(w) == Shape{2, 2});
  check_close(w, {0, 1, 2, 3});
  check_close(x.unfold(0, 3, 1), {0, 1, 2, 1, 2, 3, 2, 3, 4});
  Tensor m = seq({2, 4});
  Tensor u = m.unfold(1, 2, 1);  // [2, 3, 2]
  CHECK(shape(u) == Shape{2, 3, 2});
  check_close(u.index({1, 2}), {6, 7});
  CHECK(shape(tensor(3.0).unfold(0, 1, 1)) == Shape{1});
  check_writes_through(x, x.unfold(0, 2, 3));  // non-overlapping windows [0 1], [3 4]
  check_error([&] { seq({3}).unfold(0, 4, 1); }, "maximum size for tensor at dimension 0 is 3 but size is 4");
  check_error([&] { seq({3}).unfold(0, 2, 0); }, "step is 0 but must be > 0");
  // Overlapping windows: an element's gradient sums over the windows holding it.
  Tensor leaf = rand_leaf({4});
  leaf.unfold(0, 2, 1).sum().backward();  // windows [0 1], [1 2], [2 3]
  check_close(leaf.grad(), {1, 2, 2, 1});
  check_grad([](const TensorList& t) { return t[0].unfold(1, 2, 1); }, {rand_leaf({2, 4})});
  check_grad([](const TensorList& t) { return t[0].t().unfold(0, 3, 2); }, {rand_leaf({2, 5})});
  check_gradgrad([](const TensorList& t) { return (t[0] * t[0]).unfold(0, 2, 1); }, {rand_leaf({3})});
}

TEST_CASE("test_views: views of views share one version counter") {
  Tensor base = seq({4, 4});
  Tensor a = base.slice(0, 1, 3).t().select(0, 2);  // base[1:3, 2]
  check_close(a, {6, 10});
  a.fill_(0);
  check_close(base.index({indexing::Slice(), 2}), {2, 0, 0, 14});
  CHECK(a._version() == base._version());
  Tensor b = base.view({2, 8}).narrow(1, 4, 4).unsqueeze(0);
  b.mul_(2);
  CHECK(b._version() == a._version());
  // base[0, 4:8] is base[1, 0:4] after the view: 4 5 0 7 doubled.
  check_close(base.index({1}), {8, 10, 0, 14});
  // Autograd through a chain of views into a non-leaf base.
  check_grad(
      [](const TensorList& t) {
        return t[0].view({2, 3}).t().narrow(0, 1, 2).unsqueeze(1).expand({2, 2, 2});
      },
      {rand_leaf({6})});
}
