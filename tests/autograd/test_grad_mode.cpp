// Grad mode guards, requires_grad_, detach and detach_.
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;

namespace {
Tensor leaf(std::initializer_list<float> v) { return tensor(std::vector<float>(v), requires_grad()); }
}  // namespace

TEST_CASE("NoGradGuard, AutoGradMode and InferenceMode") {
  Tensor x = leaf({1, 2});
  CHECK(GradMode::is_enabled());
  {
    NoGradGuard guard;
    CHECK(!GradMode::is_enabled());
    Tensor y = x * 2;
    CHECK(!y.requires_grad());
    CHECK(!y.grad_fn());
    {
      AutoGradMode on(true);  // re-enabled inside a no-grad scope
      CHECK((x * 2).requires_grad());
    }
    CHECK(!GradMode::is_enabled());
  }
  CHECK(GradMode::is_enabled());
  {
    InferenceMode guard;
    CHECK(!(x * 2).requires_grad());
    {
      InferenceMode off(false);
      CHECK((x * 2).requires_grad());
    }
  }
  {
    AutoGradMode off(false);
    CHECK(!(x.exp()).requires_grad());
  }
  CHECK((x * 2).requires_grad());
}

TEST_CASE("in-place on a leaf is allowed without grad mode") {
  Tensor x = leaf({1, 2});
  uint32_t v = x._version();
  {
    NoGradGuard guard;
    x.mul_(2);  // as an optimizer step does
  }
  CHECK(x._version() == v + 1);
  CHECK(x.is_leaf());
  check_close(x, {2, 4});
  (x * x).sum().backward();
  check_close(x.grad(), {4, 8});
}

TEST_CASE("requires_grad_") {
  Tensor x = zeros({2});
  CHECK(!x.requires_grad());
  x.requires_grad_();
  CHECK(x.requires_grad());
  CHECK(x.is_leaf());
  x.requires_grad_(false);
  CHECK(!x.requires_grad());
  check_error([] { zeros({2}, kLong).requires_grad_(); },
              "only Tensors of floating point and complex dtype can require gradients");
  check_error([] { zeros({2}, kBool).requires_grad_(); },
              "only Tensors of floating point and complex dtype can require gradients");
  // A factory asked for requires_grad says it with a capital O (torch.ones(2, dtype=torch.long,
  // requires_grad=True)).
  check_error([] { ones({2}, TensorOptions().dtype(kLong).requires_grad(true)); },
              "Only Tensors of floating point and complex dtype can require gradients");
  zeros({2}, kLong).requires_grad_(false);  // turning it off is fine for any dtype
  CHECK(zeros({2}, kDouble).requires_grad_().requires_grad());

  Tensor y = leaf({1, 2}) * 2;
  check_error([&] { y.requires_grad_(false); },
              "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
              "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  y.requires_grad_(true);  // a non-leaf requires grad already: no effect
  CHECK(!y.is_leaf());
  CHECK(y.grad_fn()->name() == "MulBackward0");
}

TEST_CASE("integer results of differentiable inputs do not require grad") {
  Tensor x = leaf({1, 2});
  Tensor mask = x > 1.0;
  CHECK(mask.dtype() == kBool);
  CHECK(!mask.requires_grad());
  CHECK(!x.to(kLong).requires_grad());
}

TEST_CASE("detach shares storage and the version counter") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = x * 2;
  Tensor d = y.detach();
  CHECK(!d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.data_ptr() == y.data_ptr());
  uint32_t v = y._version();
  d.add_(1);
  CHECK(y._version() == v + 1);
  CHECK(d._version() == y._version());
  check_close(y, {3, 5, 7});  // the change shows through
  CHECK(y.requires_grad());   // y keeps its history

  // A saved tensor changed through a detached alias is caught.
  Tensor e = x.exp();
  e.detach().mul_(2);
  check_error([&] { e.sum().backward(); },
              "one of the variables needed for gradient computation has been modified by an inplace operation: "
              "[torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 "
              "instead.");
}

TEST_CASE("detach_") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  y.detach_();
  CHECK(!y.requires_grad());
  CHECK(y.is_leaf());
  CHECK(!y.grad_fn());
  check_close(y, {2, 4});
  check_error([&] { y.sum().backward(); }, "element 0 of tensors does not require grad");

  Tensor v = zeros({3}).slice(0, 0, 2);
  check_error([&] { v.detach_(); }, "Can't detach views in-place. Use detach() instead.");
}
