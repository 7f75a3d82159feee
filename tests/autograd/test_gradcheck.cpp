// gradcheck and gradgradcheck: they pass on correct gradients (contiguous, strided and
// broadcast inputs) and, just as important, fail on wrong ones.
#include "op_check.h"

using namespace ember;
using ember::autograd::AutogradContext;
using ember::autograd::GradcheckOptions;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;

namespace {

GradcheckOptions quiet() {
  GradcheckOptions o;
  o.raise_exception = false;
  return o;
}

// y = x^3 with a backward off by a factor: 2x^2 instead of 3x^2.
struct WrongCube : autograd::Function<WrongCube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * x * x * 2};
  }
};

// y = x^3 whose first derivative is right but is built from a detached x, so its own
// derivative (the second derivative of y) comes out zero instead of 6x.
struct FlatCube : autograd::Function<FlatCube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor x = ctx->get_saved_variables()[0].detach();
    return {g[0] * x * x * 3};
  }
};

// The right cube, for contrast.
struct Cube : autograd::Function<Cube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * x * x * 3};
  }
};

}  // namespace

TEST_CASE("gradcheck passes on the basic ops") {
  Tensor a = rand_leaf({2, 3}), b = rand_leaf({2, 3}, 0.5, 2.0);
  check_grad([](const TensorList& in) { return in[0] * in[1] + in[0] / in[1] - in[1].exp(); }, {a, b});
  check_grad([](const TensorList& in) { return (-in[0]).sum(); }, {a});
  check_grad([](const TensorList& in) { return in[0].mean(); }, {a});
  // Through float32 the finite differences need a larger step.
  GradcheckOptions coarse;
  coarse.eps = 1e-2;
  coarse.atol = 1e-4;
  CHECK(autograd::gradcheck([](const TensorList& in) { return in[0].to(kFloat).to(kDouble) * 3; }, {a}, coarse));
}

TEST_CASE("gradcheck on non-contiguous and broadcast inputs") {
  Tensor m = rand_leaf({3, 4});
  Tensor row = rand_leaf({4});
  check_grad([](const TensorList& in) { return in[0] * in[1]; }, {m.t(), rand_leaf({4, 3})});
  check_grad([](const TensorList& in) { return in[0] * in[1] + in[1]; }, {m, row});
  check_grad([](const TensorList& in) { return in[0].exp() * in[1]; }, {m.slice(1, 0, 4, 2), rand_leaf({3, 1})});
  check_grad([](const TensorList& in) { return in[0].view({2, 6}).sum(); }, {m});
}

TEST_CASE("gradcheck with several outputs and an unused input") {
  Tensor a = rand_leaf({3}), b = rand_leaf({3});
  autograd::GradcheckFn fn = [](const TensorList& in) { return TensorList{in[0] * 2, in[0] * in[0]}; };
  CHECK(autograd::gradcheck(fn, {a, b}));
}

TEST_CASE("gradgradcheck passes on correct second derivatives") {
  Tensor a = rand_leaf({3}), b = rand_leaf({3}, 0.5, 2.0);
  check_gradgrad([](const TensorList& in) { return in[0] * in[0] * in[1]; }, {a, b});
  check_gradgrad([](const TensorList& in) { return in[0] / in[1]; }, {a, b});
  check_gradgrad([](const TensorList& in) { return in[0].exp().sum(); }, {a});
  check_gradgrad([](const TensorList& in) { return Cube::apply(in[0]); }, {a});
}

TEST_CASE("gradcheck fails on a wrong backward") {
  Tensor x = rand_leaf({3}, 0.5, 1.5);
  auto fn = [](const TensorList& in) { return WrongCube::apply(in[0]); };
  CHECK(!autograd::gradcheck(fn, {x}, quiet()));
  check_error([&] { autograd::gradcheck(fn, {x}); }, "Jacobian mismatch for output 0 with respect to input 0,");
  CHECK(autograd::gradcheck([](const TensorList& in) { return Cube::apply(in[0]); }, {x}));
}

TEST_CASE("gradgradcheck fails on a wrong second derivative") {
  Tensor x = rand_leaf({3}, 0.5, 1.5);
  auto flat = [](const TensorList& in) { return FlatCube::apply(in[0]); };
  CHECK(autograd::gradcheck(flat, {x}));  // the first derivative is right
  CHECK(!autograd::gradgradcheck(flat, {x}, quiet()));
  check_error([&] { autograd::gradgradcheck(flat, {x}); }, "Jacobian mismatch");
}

TEST_CASE("gradcheck fails when the function cuts the graph") {
  // The output does not require grad but depends on x: checking nothing would pass.
  Tensor x = rand_leaf({3});
  auto cut = [](const TensorList& in) { return in[0].detach() * 2; };
  CHECK(!autograd::gradcheck(cut, {x}, quiet()));
  check_error([&] { autograd::gradcheck(cut, {x}); }, "Numerical gradient for function expected to be zero");
  // A part of the output that truly does not depend on x is fine.
  CHECK(autograd::gradcheck([](const TensorList& in) { return in[0] * 0 + 1; }, {x}));
}

TEST_CASE("gradcheck input errors") {
  check_error([] { autograd::gradcheck([](const TensorList& in) { return in[0] * 2; }, {rand({2}, kDouble)}); },
              "gradcheck expects at least one input tensor to require gradient");
  check_error([] { autograd::gradcheck([](const TensorList& in) { return in[0] * 2; }, {ones({2}, requires_grad())}); },
              "requires grad but is not float64");
}
