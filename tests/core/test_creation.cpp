// Creation ops: empty/zeros/ones/full, arange, linspace, eye, empty_strided, the *_like
// forms, from_blob and tensor({...}). Expected values are hand-computed or pasted from
// PyTorch 1.13 (the one-liner is next to each).
#include <cmath>
#include <cstdint>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::shape;
using ember::test::values;

using Shape = std::vector<int64_t>;

TEST_CASE("test_creation: empty, zeros, ones, full") {
  Tensor e = empty({2, 3});
  CHECK(shape(e) == Shape{2, 3});
  CHECK(e.dtype() == kFloat);
  CHECK(e.is_contiguous());
  CHECK(e.strides().vec() == Shape{3, 1});

  check_close(zeros({2, 2}), {0, 0, 0, 0});
  check_close(ones({3}, kInt32), {1, 1, 1});
  CHECK(ones({3}, kInt32).dtype() == kInt);
  CHECK(zeros({}, kDouble).dim() == 0);
  CHECK(zeros({}).numel() == 1);
  CHECK(zeros({4, 0}).numel() == 0);

  // full infers its dtype from the fill value: torch.full((2,), v).dtype
  CHECK(full({2}, 1.5).dtype() == kFloat);
  CHECK(full({2}, 1).dtype() == kLong);
  CHECK(full({2}, true).dtype() == kBool);
  check_close(full({2, 2}, -2.5), {-2.5, -2.5, -2.5, -2.5});
  check_close(full({2}, 7), {7, 7});
  check_close(full({2}, 2.7, kInt32), {2, 2});  // truncated toward zero
  CHECK(full({2}, 1.5, kDouble).dtype() == kDouble);
  CHECK(full({2}, 3.0, requires_grad()).requires_grad());

  Tensor s = scalar_tensor(2.5);
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 2.5);
  // torch.scalar_tensor(3).dtype == torch.float32: the default dtype, whatever the scalar.
  CHECK(scalar_tensor(3).dtype() == kFloat);
  CHECK(scalar_tensor(true).dtype() == kFloat);
  CHECK(scalar_tensor(3, kFloat64).dtype() == kDouble);

  Tensor g = zeros({2}, requires_grad());
  CHECK(g.requires_grad());
  CHECK(g.is_leaf());
}

TEST_CASE("test_creation: negative dimension error") {
  // torch.empty(-1, 2) -> "Trying to create tensor with negative dimension -1: [-1, 2]"
  check_error([] { empty({-1, 2}); }, "Trying to create tensor with negative dimension -1: [-1, 2]");
  check_error([] { zeros({3, -2}); }, "Trying to create tensor with negative dimension -2: [3, -2]");
  check_error([] { full({-1}, 1.0); }, "Trying to create tensor with negative dimension -1: [-1]");
  check_error([] { empty_strided({-1, 2}, {2, 1}); }, "Trying to create tensor with negative dimension -1");
}

TEST_CASE("test_creation: arange") {
  Tensor a = arange(5);
  CHECK(a.dtype() == kLong);
  check_close(a, {0, 1, 2, 3, 4});
  CHECK(arange(5.).dtype() == kFloat);
  CHECK(arange(0, 5, 1.0).dtype() == kFloat);
  CHECK(arange(0, 5, kDouble).dtype() == kDouble);
  check_close(arange(2, 6), {2, 3, 4, 5});
  check_close(arange(10, 0, -3), {10, 7, 4, 1});   // torch.arange(10, 0, -3)
  check_close(arange(0.5, 3), {0.5, 1.5, 2.5});    // torch.arange(0.5, 3)
  // torch.arange(1, 2.5, 0.3).tolist(): 5 elements, each start + i*step in double -> float
  check_close(arange(1, 2.5, 0.3), {1.0, 1.2999999523162842, 1.600000023841858, 1.899999976158142,
                                    2.200000047683716}, 0, 0);
  CHECK(arange(0, 1, 0.1).numel() == 10);  // ceil(1 / 0.1) = 10
  CHECK(arange(0, 0).numel() == 0);
  CHECK(arange(3, kHalf).dtype() == kHalf);
  check_close(arange(3, kHalf), {0, 1, 2});

  // Integer dtypes convert start/step to int64 first (PyTorch's accumulate type):
  // torch.arange(-2.5, 2, 1.5, dtype=torch.int32) -> [-2, -1, 0]; the length comes from
  // the doubles (ceil(4.5 / 1.5) = 3) except for int64, where it comes from the converted ones:
  // torch.arange(0, 2.5, 1, dtype=torch.int32) -> [0, 1, 2]; dtype=torch.int64 -> [0, 1].
  check_close(arange(-2.5, 2, 1.5, kInt32), {-2, -1, 0});
  check_close(arange(0, 2.5, 1, kInt32), {0, 1, 2});
  check_close(arange(0, 2.5, 1, kLong), {0, 1});
  check_close(arange(0.5, 3, kLong), {0, 1, 2});

  check_error([] { arange(0, 10, 0); }, "step must be nonzero");
  check_error([] { arange(0, 1, 0.0); }, "step must be nonzero");
  // torch.arange(0, 2.5, 0.5, dtype=torch.int64): the step truncates to 0.
  check_error([] { arange(0, 2.5, 0.5, kLong); }, "step must be nonzero");
  check_error([] { arange(10, 0, 1); }, "upper bound and larger bound inconsistent with step sign");
  check_error([] { arange(0, 10, -1); }, "upper bound and larger bound inconsistent with step sign");
  check_error([] { arange(0, INFINITY); }, "unsupported range: 0 -> inf");
  check_error([] { arange(3, kBool); }, "\"arange_cpu\" not implemented for 'Bool'");
}

TEST_CASE("test_creation: linspace") {
  // torch.linspace(-1, 1, 7).tolist()
  check_close(linspace(-1, 1, 7),
              {-1.0, -0.6666666269302368, -0.3333333134651184, -2.9802322387695312e-08,
               0.3333333134651184, 0.6666666269302368, 1.0},
              1e-7, 0);
  // torch.linspace(0, 1, 11).tolist()
  check_close(linspace(0, 1, 11),
              {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
               0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421, 1.0},
              1e-7, 0);
  Tensor l = linspace(0, 1, 11);
  CHECK(values(l).back() == 1.0);  // filled from both ends: the last value is exactly `end`
  CHECK(l.dtype() == kFloat);       // default dtype even for integer bounds
  CHECK(linspace(0, 1, 3, kDouble).dtype() == kDouble);

  // steps == 1 gives `start`, steps == 0 an empty tensor: torch.linspace(2, 5, 1) -> [2.]
  check_close(linspace(2, 5, 1), {2});
  CHECK(shape(linspace(2, 5, 0)) == Shape{0});
  check_close(linspace(2.7, 2, 1, kLong), {2});
  // Integer dtypes: torch.linspace(0, 10, 4, dtype=torch.int64) -> [0, 3, 6, 10] (truncation),
  // torch.linspace(-3, 4, 5, dtype=torch.int32) -> [-3, -1, 0, 2, 4],
  // torch.linspace(0.5, 10.7, 4, dtype=torch.int64) -> [0, 3, 6, 10] (bounds converted first).
  check_close(linspace(0, 10, 4, kLong), {0, 3, 6, 10});
  check_close(linspace(-3, 4, 5, kInt32), {-3, -1, 0, 2, 4});
  check_close(linspace(0.5, 10.7, 4, kLong), {0, 3, 6, 10});
  // Decreasing ranges: linspace(5, -5, 5) = [5, 2.5, 0, -2.5, -5]
  check_close(linspace(5, -5, 5), {5, 2.5, 0, -2.5, -5});

  check_error([] { linspace(0, 1, -1); }, "number of steps must be non-negative");
  check_error([] { linspace(0, 1, 3, kBool); }, "\"linspace_cpu\" not implemented for 'Bool'");
}

TEST_CASE("test_creation: eye") {
  check_close(eye(3), {1, 0, 0, 0, 1, 0, 0, 0, 1});
  Tensor r = eye(2, 4);
  CHECK(shape(r) == Shape{2, 4});
  check_close(r, {1, 0, 0, 0, 0, 1, 0, 0});
  check_close(eye(3, 2, kInt32), {1, 0, 0, 1, 0, 0});
  CHECK(eye(3, 2, kInt32).dtype() == kInt);
  CHECK(eye(2, kBool).dtype() == kBool);
  CHECK(shape(eye(0)) == Shape{0, 0});
  CHECK(eye(2, requires_grad()).requires_grad());
  check_error([] { eye(-1); }, "n must be greater or equal to 0, got -1");
  check_error([] { eye(2, -1); }, "m must be greater or equal to 0, got -1");
}

TEST_CASE("test_creation: empty_strided") {
  Tensor t = empty_strided({2, 3}, {1, 2});
  CHECK(shape(t) == Shape{2, 3});
  CHECK(t.strides().vec() == Shape{1, 2});
  CHECK(!t.is_contiguous());
  // The storage must hold the furthest element: 1 + (2-1)*1 + (3-1)*2 = 6 floats.
  CHECK(t.unsafeGetTensorImpl()->storage()->nbytes() >= 6 * sizeof(float));
  t.fill_(3.0);
  check_close(t, {3, 3, 3, 3, 3, 3});
  // A broadcast-like stride 0 is allowed.
  Tensor z = empty_strided({4}, {0}, kDouble);
  z.fill_(1.0);
  check_close(z, {1, 1, 1, 1});
  CHECK(empty_strided({0, 3}, {3, 1}).numel() == 0);
  check_error([] { empty_strided({2, 3}, {1}); },
              "dimensionality of sizes (2) must match dimensionality of strides (1)");
}

TEST_CASE("test_creation: *_like forms") {
  Tensor base = ones({2, 3}, kInt32);
  Tensor e = empty_like(base);
  CHECK(shape(e) == Shape{2, 3});
  CHECK(e.dtype() == kInt);
  Tensor z = zeros_like(base);
  check_close(z, {0, 0, 0, 0, 0, 0});
  CHECK(z.dtype() == kInt);
  Tensor o = ones_like(base, kDouble);
  CHECK(o.dtype() == kDouble);
  check_close(o, {1, 1, 1, 1, 1, 1});
  Tensor f = full_like(base, 4);
  CHECK(f.dtype() == kInt);
  check_close(f, {4, 4, 4, 4, 4, 4});
  Tensor fl = full_like(zeros({2}), 2.5, requires_grad());
  CHECK(fl.requires_grad());
  check_close(fl, {2.5, 2.5});
  // The *_like forms never alias their argument and do not copy requires_grad.
  Tensor leaf = ones({2}, requires_grad());
  Tensor zl = zeros_like(leaf);
  CHECK(!zl.requires_grad());
  CHECK(!zl.is_alias_of(leaf));
  // A non-contiguous argument gives a contiguous result of the same shape.
  Tensor t = zeros_like(arange(6.).view({2, 3}).t());
  CHECK(shape(t) == Shape{3, 2});
  CHECK(t.is_contiguous());
}

TEST_CASE("test_creation: from_blob does not copy") {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  Tensor t = from_blob(buf, {2, 3});
  CHECK(t.data_ptr() == static_cast<void*>(buf));
  CHECK(t.dtype() == kFloat);
  check_close(t, {0, 1, 2, 3, 4, 5});
  t.fill_(7.0);  // writing through the tensor changes the buffer
  CHECK(buf[0] == 7.0f);
  CHECK(buf[5] == 7.0f);
  buf[2] = -1;  // and the other way round
  CHECK(values(t)[2] == -1.0);

  // Strides: a column-major view of the same buffer.
  double d[6] = {0, 1, 2, 3, 4, 5};
  Tensor c = from_blob(d, {2, 3}, {1, 2}, kDouble);
  CHECK(c.strides().vec() == Shape{1, 2});
  // element (i, j) = d[i + 2 j]
  check_close(c, {0, 2, 4, 1, 3, 5});
  c.select(1, 2).fill_(9.0);  // column 2 = d[4], d[5]
  CHECK(d[4] == 9.0);
  CHECK(d[5] == 9.0);
  CHECK(d[3] == 3.0);

  int64_t ints[3] = {5, 6, 7};
  check_close(from_blob(ints, {3}, kLong), {5, 6, 7});
}

TEST_CASE("test_creation: from_blob deleter runs once when the last reference goes") {
  int calls = 0;
  void* seen = nullptr;
  auto* data = new float[4]{1, 2, 3, 4};
  {
    Tensor t = from_blob(data, {4}, [&](void* p) { ++calls; seen = p; delete[] static_cast<float*>(p); });
    Tensor view = t.view({2, 2});  // shares the storage
    Tensor alias = t.detach();
    t.reset();
    CHECK(calls == 0);
    check_close(view, {1, 2, 3, 4});
    view.reset();
    CHECK(calls == 0);
  }
  CHECK(calls == 1);
  CHECK(seen == static_cast<void*>(data));
}

TEST_CASE("test_creation: tensor({...}) dtype inference") {
  Tensor i = tensor({1, 2, 3});
  CHECK(i.dtype() == kLong);
  CHECK(shape(i) == Shape{3});
  check_close(i, {1, 2, 3});
  CHECK(tensor({1.5, 2.5}).dtype() == kFloat);
  CHECK(tensor({1.5f, 2.5f}).dtype() == kFloat);
  CHECK(tensor({true, false}).dtype() == kBool);
  check_close(tensor({true, false}), {1, 0});
  // Mixed: {1, 2.5} is floating (torch.tensor([1, 2.5]).dtype == torch.float32),
  // {true, 1} integral (torch.tensor([True, 1]).dtype == torch.int64).
  Tensor m = tensor({1, 2.5});
  CHECK(m.dtype() == kFloat);
  check_close(m, {1, 2.5});
  CHECK(tensor({true, 1}).dtype() == kLong);
  check_close(tensor({true, 1}), {1, 1});
  CHECK(tensor({{1, 2}, {3.5, 4}}).dtype() == kFloat);
  // Options win over inference.
  CHECK(tensor({1, 2}, kDouble).dtype() == kDouble);
  check_close(tensor({1.9, -1.9}, kInt32), {1, -1});
  CHECK(tensor({1.0, 2.0}, requires_grad()).requires_grad());

  // 0-dim from a scalar.
  Tensor s = tensor(3.0);
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 3.0);
  CHECK(tensor(7).dtype() == kLong);
  CHECK(tensor(true).dtype() == kBool);

  // Nested lists.
  Tensor n = tensor({{1, 2, 3}, {4, 5, 6}});
  CHECK(shape(n) == Shape{2, 3});
  check_close(n, {1, 2, 3, 4, 5, 6});
  Tensor n3 = tensor({{{1.}, {2.}}, {{3.}, {4.}}});
  CHECK(shape(n3) == Shape{2, 2, 1});
  check_close(n3, {1, 2, 3, 4});

  // With the default dtype set to double, floating lists follow it.
  set_default_dtype(kDouble);
  CHECK(tensor({1.5}).dtype() == kDouble);
  CHECK(tensor({1}).dtype() == kLong);
  set_default_dtype(kFloat);
}

TEST_CASE("test_creation: tensor(std::vector)") {
  Tensor f = tensor(std::vector<float>{1.5f, -2.f});
  CHECK(f.dtype() == kFloat);
  check_close(f, {1.5, -2});
  // libtorch: floating element types give the default dtype, int/long give int64.
  Tensor d = tensor(std::vector<double>{0.25, 0.5, 1.0});
  CHECK(d.dtype() == kFloat);
  check_close(d, {0.25, 0.5, 1.0});
  Tensor l = tensor(std::vector<int64_t>{4, 5, -6});
  CHECK(l.dtype() == kLong);
  check_close(l, {4, 5, -6});
  Tensor b = tensor(std::vector<bool>{true, false, true});
  CHECK(b.dtype() == kBool);
  check_close(b, {1, 0, 1});
  // Other element types keep their dtype (libtorch's compute_desired_dtype).
  CHECK(tensor(std::vector<int16_t>{1, 2}).dtype() == kShort);
  CHECK(tensor(std::vector<double>{1.0}, kDouble).dtype() == kDouble);
  // Vectors nest inside braced lists.
  Tensor n = tensor({std::vector<double>{1, 2}, std::vector<double>{3, 4}});
  CHECK(shape(n) == Shape{2, 2});
  check_close(n, {1, 2, 3, 4});
}

TEST_CASE("test_creation: ragged lists") {
  // libtorch: "Expected all sub-lists to have sizes: [2] (e.g. {1, 2}), but got sub-list {3}
  // with sizes: [1]"
  check_error([] { tensor({{1, 2}, {3}}); },
              "Expected all sub-lists to have sizes: [2] (e.g. {1, 2}), but got sub-list {3} with sizes: [1]");
  check_error([] { tensor({{1.5, 2}, {3, 4, 5}}); }, "Expected all sub-lists to have sizes: [2]");
  check_error([] { tensor({1, {2, 3}}); }, "Expected all sub-lists to have sizes: [] (e.g. 1)");
  check_error([] { tensor({{{1}, {2}}, {{3, 4}, {5, 6}}}); }, "Expected all sub-lists to have sizes: [2, 1]");
}

TEST_CASE("test_creation: fresh tensors start at version 0") {
  // torch.zeros(2)._version == 0: filling a new tensor is not an in-place change.
  CHECK(zeros({2})._version() == 0);
  CHECK(ones({2})._version() == 0);
  CHECK(full({2}, 3)._version() == 0);
  CHECK(zeros_like(ones({3}))._version() == 0);
  Tensor t = zeros({2});
  t.fill_(1);
  CHECK(t._version() == 1);
}
