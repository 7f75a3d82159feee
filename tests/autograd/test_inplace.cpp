// In-place ops under autograd: version-checked saved tensors, the leaf and view-of-leaf
// errors, rebased history on non-leaves, CopySlices for views, and regenerated grad_fns of
// other views of a changed base. Functions that write in place into clones are gradchecked.
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;

namespace {
Tensor leaf(std::initializer_list<float> v) { return tensor(std::vector<float>(v), requires_grad()); }
const char* kHint =
    " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True).";
}  // namespace

TEST_CASE("every in-place op bumps the version counter") {
  Tensor t = zeros({3});
  uint32_t v0 = t._version();
  t.add_(1);
  t.mul_(2);
  t.fill_(3);
  t.copy_(ones({3}));
  CHECK(t._version() == v0 + 4);
  Tensor v = t.slice(0, 0, 2);
  v.zero_();
  CHECK(t._version() == v0 + 5);  // one counter for the storage
  CHECK(v._version() == v0 + 5);
  Tensor c = t.clone();  // a copy has a counter of its own
  uint32_t cv = c._version();
  c.add_(1);
  CHECK(t._version() == v0 + 5);
  CHECK(c._version() == cv + 1);
}

TEST_CASE("a saved output modified in place") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = x.exp();
  y.add_(1);
  check_error([&] { y.sum().backward(); },
              std::string("one of the variables needed for gradient computation has been modified by an inplace "
                          "operation: [torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; "
                          "expected version 0") + kHint);
}

TEST_CASE("a saved input modified in place") {
  Tensor x = leaf({1, 2, 3});
  Tensor a = tensor({1.0f, 1.0f, 1.0f});  // a leaf that needs no gradient: no producer to name
  Tensor y = x * a;
  a.mul_(2);
  check_error([&] { y.sum().backward(); },
              std::string("modified by an inplace operation: [torch.FloatTensor [3]] is at version 1; expected "
                          "version 0") + kHint);

  // A non-leaf input: PyTorch names the node that produced its current value.
  Tensor h = x * 2;
  Tensor q = h * h;
  h.add_(1);
  check_error([&] { q.sum().backward(); },
              "[torch.FloatTensor [3]], which is output 0 of AddBackward0, is at version 1; expected version 0");

  Tensor d = tensor({1.0, 2.0}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor e = d.exp();
  e.mul_(2);
  e.mul_(2);
  check_error([&] { e.sum().backward(); }, "[torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at "
                                           "version 2; expected version 0");
}

TEST_CASE("writing a tensor nobody saved is fine") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 3;  // MulBackward0 saved x and the scalar, not y
  y.add_(1);
  y.sum().backward();
  check_close(x.grad(), {3, 3});
}

TEST_CASE("in-place on leaves that require grad") {
  Tensor x = leaf({1, 2, 3});
  check_error([&] { x.add_(1); }, "a leaf Variable that requires grad is being used in an in-place operation.");
  check_error([&] { x.fill_(0); }, "a leaf Variable that requires grad is being used in an in-place operation.");
  check_error([&] { x.copy_(ones({3})); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
  check_error([&] { x.slice(0, 0, 2).mul_(2); },
              "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  check_error([&] { x.select(0, 1).zero_(); },
              "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  check_close(x, {1, 2, 3});  // nothing was written
  CHECK(x._version() == 0);
}

TEST_CASE("writing into expanded memory is refused") {
  check_error([] { zeros({3}).expand({2, 3}).add_(1); },
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
  Tensor z = zeros({3});
  z.expand({2, 3}).fill_(2);  // one value everywhere: allowed, as in PyTorch
  check_close(z, {2, 2, 2});
}

TEST_CASE("in-place on a non-leaf rebases its history") {
  // y = 2x; y *= x  ->  y = 2x^2, dy/dx = 4x
  Tensor x = leaf({1, 2, 3});
  Tensor y = x * 2;
  y.mul_(x);
  CHECK(y.grad_fn()->name() == "MulBackward0");
  CHECK(!y.is_leaf());
  y.sum().backward();
  check_close(x.grad(), {4, 8, 12});
}

TEST_CASE("copy_ and fill_ cut the overwritten history") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  y.fill_(1);
  CHECK(y.requires_grad());
  y.sum().backward();
  check_close(x.grad(), {0, 0});

  Tensor src = leaf({5, 6});
  Tensor z = x * 2;
  z.copy_(src * 3);
  CHECK(z.grad_fn()->name() == "CopyBackwards");
  (z * z).sum().backward();
  check_close(src.grad(), {2 * 15 * 3, 2 * 18 * 3});
  check_close(x.grad(), {0, 0});  // unchanged: zeros were added
}

TEST_CASE("in-place on a view of a non-leaf goes through CopySlices") {
  // b = x; b[1:] *= x[:2]  ->  b = [x0, x1 x0, x2 x1]
  // d sum(b)/dx = [1 + x1, x0 + x2, x1] = [3, 4, 2] at x = [1, 2, 3]
  Tensor x = leaf({1, 2, 3});
  Tensor b = x * 1;
  Tensor v = b.slice(0, 1, 3);
  v.mul_(x.slice(0, 0, 2));
  CHECK(b.grad_fn()->name() == "CopySlices");
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  check_close(b, {1, 2, 6});
  b.sum().backward();
  check_close(x.grad(), {3, 4, 2});
}

TEST_CASE("copy_ into a view of a tensor that needs no gradient") {
  // base = [2 x0, 2 x1, 0] after the copy; d sum(base * [1, 10, 100]) / dx = [2, 20]
  Tensor x = leaf({1, 2});
  Tensor base = zeros({3});
  Tensor other_view = base.slice(0, 1, 3);  // made before base had any history
  base.slice(0, 0, 2).copy_(x * 2);
  CHECK(base.requires_grad());
  CHECK(base.grad_fn()->name() == "CopySlices");
  CHECK(other_view.requires_grad());
  CHECK(other_view.grad_fn()->name() == "AsStridedBackward0");
  (base * tensor({1.0f, 10.0f, 100.0f})).sum().backward({}, true);
  check_close(x.grad(), {2, 20});
  x.mutable_grad().reset();
  other_view.sum().backward();  // other_view = [2 x1, 0]
  check_close(x.grad(), {0, 2});
}

TEST_CASE("other views of a base changed in place see the new values' history") {
  // b = x; v1 = b[0]; v2 = b[0:2]; v2 *= 2  ->  v1 = 2 x0 (PyTorch: x.grad = [2, 0, 0])
  Tensor x = leaf({1, 2, 3});
  Tensor b = x.clone();
  Tensor v1 = b.select(0, 0);
  Tensor v2 = b.slice(0, 0, 2);
  v2.mul_(2);
  CHECK(v1.grad_fn()->name() == "AsStridedBackward0");
  (v1 * 1).backward();
  check_close(x.grad(), {2, 0, 0});

  // An expanded view of a base doubled in place: each x_i is read twice, times 2.
  Tensor y = leaf({1, 2, 3});
  Tensor c = y * 1;
  Tensor e = c.expand({2, 3});
  c.mul_(2);
  e.sum().backward();
  check_close(y.grad(), {4, 4, 4});
}

TEST_CASE("a view's retained gradient follows a regenerated grad_fn") {
  Tensor x = leaf({1, 2});
  Tensor b = x * 1;
  Tensor v = b.slice(0, 0, 1);
  v.retain_grad();
  b.mul_(3);
  (v * 5).sum().backward();
  check_close(v.grad(), {5});
  check_close(x.grad(), {15, 0});
}

TEST_CASE("gradcheck of functions that write into clones") {
  Tensor x = rand_leaf({4});
  // b = x (x + 1) elementwise, in place
  check_grad([](const TensorList& in) {
    Tensor b = in[0].clone();
    b.mul_(in[0]);
    b.add_(in[0]);
    return b;
  }, {x});
  // in place on a slice, the other operand another slice of the input
  check_grad([](const TensorList& in) {
    Tensor b = in[0].clone();
    b.narrow(0, 1, 3).mul_(in[0].narrow(0, 0, 3));
    return b * in[0];
  }, {x});
  // several views, one written, another read after the write
  check_grad([](const TensorList& in) {
    Tensor b = in[0] * 2;  // (exp would save b, and writing b would then be an error)
    Tensor first = b.select(0, 0);
    b.narrow(0, 0, 2).div_(in[0].narrow(0, 2, 2) + 3);
    return first * b.sum();
  }, {x});
  // fill_ of a region: no gradient reaches the overwritten entries
  check_grad([](const TensorList& in) {
    Tensor b = in[0] * in[0];
    b.narrow(0, 1, 2).fill_(5);
    return b * in[0];
  }, {x});
}

TEST_CASE("gradcheck of in-place writes through non-contiguous views") {
  Tensor m = rand_leaf({3, 4});
  Tensor s = rand_leaf({3});
  // A column of the transposed clone is a strided view of the base.
  check_grad([](const TensorList& in) {
    Tensor b = in[0].clone();
    Tensor col = b.t().select(0, 1);  // b[:, 1], stride 4
    col.mul_(in[1]);
    return b;
  }, {m, s});
  // The base itself is a strided (transposed) tensor made by a copy: views of it and
  // in-place writes on it must use its own layout.
  check_grad([](const TensorList& in) {
    Tensor b = in[0].t().contiguous().t();  // same values as m, column-major storage
    b = b * 1;
    b.select(1, 2).sub_(in[1] * 2);
    return b.exp();
  }, {m, s});
  // A non-contiguous leaf input.
  Tensor base = rand_leaf({4, 3});
  check_grad([](const TensorList& in) {
    Tensor b = in[0].clone();
    b.select(0, 0).copy_(in[0].select(0, 2) * 3);
    return b;
  }, {base.t()});
}

TEST_CASE("second derivatives through CopySlices") {
  Tensor x = rand_leaf({4});
  check_gradgrad([](const TensorList& in) {
    Tensor b = in[0] * in[0];
    b.narrow(0, 1, 2).mul_(in[0].narrow(0, 0, 2));
    return b;
  }, {x});
}
