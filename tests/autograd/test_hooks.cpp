// Tensor hooks (leaves and non-leaves), remove_hook, retain_grad, post-accumulate-grad hooks.
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;

namespace {
Tensor leaf(std::initializer_list<float> v) { return tensor(std::vector<float>(v), requires_grad()); }
}  // namespace

TEST_CASE("a hook on a leaf can replace its gradient") {
  Tensor x = leaf({1, 2});
  x.register_hook([](const Tensor& g) { return g * 10; });
  (x * x).sum().backward();
  check_close(x.grad(), {20, 40});  // 2x * 10
}

TEST_CASE("hooks chain in registration order; void hooks observe") {
  Tensor x = leaf({1, 2});
  std::vector<double> seen;
  x.register_hook([](const Tensor& g) { return g + 1; });
  x.register_hook([&](const Tensor& g) { seen = ember::test::values(g); });
  x.register_hook([](const Tensor& g) { return g * 2; });
  (x * 3).sum().backward();
  CHECK(seen == std::vector<double>{4, 4});  // (3 + 1), before the *2
  check_close(x.grad(), {8, 8});
}

TEST_CASE("remove_hook") {
  Tensor x = leaf({1});
  unsigned h = x.register_hook([](const Tensor& g) { return g * 100; });
  x.remove_hook(h);
  (x * 3).sum().backward();
  check_close(x.grad(), {3});

  Tensor y = x * 1;
  unsigned hy = y.register_hook([](const Tensor& g) { return g * 100; });
  y.remove_hook(hy);
  x.mutable_grad().reset();
  (y * 3).sum().backward();
  check_close(x.grad(), {3});
}

TEST_CASE("a hook on a non-leaf changes what flows on") {
  Tensor x = leaf({1, 2});
  Tensor h = x * 2;
  std::vector<double> seen;
  h.register_hook([&](const Tensor& g) { seen = ember::test::values(g); });
  h.register_hook([](const Tensor& g) { return g * 10; });
  (h * h).sum().backward();
  CHECK(seen == std::vector<double>{4, 8});  // 2h
  check_close(x.grad(), {80, 160});          // 2h * 10 * 2
}

TEST_CASE("hooks run for autograd::grad too") {
  Tensor x = leaf({1, 2});
  x.register_hook([](const Tensor& g) { return g * 10; });
  check_close(autograd::grad({(x * 3).sum()}, {x})[0], {30, 30});
  CHECK(!x.grad().defined());
}

TEST_CASE("register_hook needs a tensor that requires grad") {
  check_error([] { zeros({2}).register_hook([](const Tensor& g) { return g; }); },
              "cannot register a hook on a tensor that doesn't require gradient");
}

TEST_CASE("retain_grad") {
  Tensor x = leaf({1, 2});
  Tensor h = x * 2;
  Tensor k = x * 3;
  CHECK(!h.retains_grad());
  h.retain_grad();
  h.retain_grad();  // twice is once
  CHECK(h.retains_grad());
  Tensor y = (h * h + k).sum();
  y.backward({}, true);
  check_close(h.grad(), {4, 8});  // 2h
  CHECK(!k.grad().defined());     // not retained
  CHECK(!h.grad().requires_grad());
  y.backward();
  check_close(h.grad(), {8, 16});  // accumulates like a leaf's .grad

  CHECK(!x.retains_grad());  // leaves keep .grad anyway
  x.retain_grad();
  CHECK(!x.retains_grad());
  check_error([] { zeros({1}).retain_grad(); }, "can't retain_grad on Tensor that has requires_grad=False");
}

TEST_CASE("retain_grad sees hooks' changes") {
  Tensor x = leaf({1});
  Tensor h = x * 2;
  h.retain_grad();
  h.register_hook([](const Tensor& g) { return g * 5; });
  (h * 3).sum().backward();
  check_close(h.grad(), {15});
  check_close(x.grad(), {30});
}

TEST_CASE("retain_grad follows an in-place op; hooks stay with the old value") {
  // y = 2x, then y *= 3: y.grad is the gradient of the new y (ones); a hook registered
  // before the in-place op sees the gradient of the old y (3), as in PyTorch.
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  y.retain_grad();
  std::vector<double> old_seen;
  y.register_hook([&](const Tensor& g) { old_seen = ember::test::values(g); });
  y.mul_(3);
  y.sum().backward();
  check_close(y.grad(), {1, 1});
  CHECK(old_seen == std::vector<double>{3, 3});
  check_close(x.grad(), {6, 6});
}

TEST_CASE("post-accumulate-grad hooks") {
  Tensor w = leaf({1, 2});
  int calls = 0;
  std::vector<double> seen;
  w.register_post_accumulate_grad_hook([&](Tensor& p) {
    ++calls;
    seen = ember::test::values(p.grad());
  });
  (w * 3).sum().backward();
  CHECK(calls == 1);
  CHECK(seen == std::vector<double>{3, 3});
  (w * w).sum().backward();
  CHECK(calls == 2);
  CHECK(seen == std::vector<double>{5, 7});  // accumulated: 3 + 2w

  // An optimizer-in-backward step: update the parameter and drop its gradient.
  Tensor p = leaf({1, 1});
  p.register_post_accumulate_grad_hook([](Tensor& t) {
    NoGradGuard g;
    t.sub_(t.grad() * 0.5);
    t.mutable_grad().reset();
  });
  (p * 4).sum().backward();
  check_close(p, {-1, -1});
  CHECK(!p.grad().defined());

  Tensor h = w * 2;
  check_error([&] { h.register_post_accumulate_grad_hook([](Tensor&) {}); },
              "post accumulate grad hooks cannot be registered on non-leaf tensors");
  check_error([] { zeros({1}).register_post_accumulate_grad_hook([](Tensor&) {}); },
              "cannot register a hook on a tensor that doesn't require gradient");
}

TEST_CASE("post-accumulate-grad hooks do not run for autograd::grad") {
  Tensor w = leaf({1});
  int calls = 0;
  w.register_post_accumulate_grad_hook([&](Tensor&) { ++calls; });
  autograd::grad({(w * 2).sum()}, {w});
  CHECK(calls == 0);
}
