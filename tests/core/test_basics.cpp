// Smoke tests of the core: creation, views, printing, add/mul/sum and a backward pass.
#include "op_check.h"

using namespace ember;
using ember::test::check_close;

TEST_CASE("creation and printing") {
  Tensor z = zeros({2, 3});
  CHECK(z.dtype() == kFloat);
  CHECK(z.sizes().vec() == std::vector<int64_t>{2, 3});
  Tensor a = arange(4, kFloat).view({2, 2});
  CHECK(a.toString() == "tensor([[0., 1.],\n        [2., 3.]])");
  Tensor r = ones({2}, requires_grad());
  CHECK(r.toString() == "tensor([1., 1.], requires_grad=True)");
  CHECK(tensor({1.5, 2.25}).toString() == "tensor([1.5000, 2.2500])");
  CHECK(tensor({1, 2, 3}).toString() == "tensor([1, 2, 3])");
  CHECK(tensor({1, 2}, kInt32).toString() == "tensor([1, 2], dtype=torch.int32)");
  CHECK(tensor(3.0).toString() == "tensor(3.)");
  CHECK(zeros({0, 3}).toString() == "tensor([], size=(0, 3))");
}

TEST_CASE("add, mul, sum and backward") {
  Tensor x = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor w = tensor({0.5, -1.0, 2.0}, requires_grad());
  Tensor y = (x * w + x).sum();
  check_close(y, {0.5 - 2.0 + 6.0 + 6.0});
  y.backward();
  // d/dx = w + 1, d/dw = x
  check_close(x.grad(), {1.5, 0.0, 3.0});
  check_close(w.grad(), {1.0, 2.0, 3.0});
}

TEST_CASE("broadcasting gradients are summed") {
  Tensor a = ones({2, 3}, requires_grad());
  Tensor b = ones({3}, requires_grad());
  (a * b).sum().backward();
  check_close(b.grad(), {2.0, 2.0, 2.0});
}
