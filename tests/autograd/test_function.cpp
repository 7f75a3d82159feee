// Custom autograd::Function: forward/backward, saved tensors (inputs and outputs), saved_data
// and non-tensor arguments, needs_input_grad, mark_non_differentiable, mark_dirty,
// materialized gradients, and libtorch's errors on a wrong backward result.
#include <memory>

#include "op_check.h"

using namespace ember;
using ember::autograd::AutogradContext;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;

namespace {

Tensor leaf(std::initializer_list<float> v) { return tensor(std::vector<float>(v), requires_grad()); }

// y = k x with k a non-tensor argument: dy/dx = k, no gradient for k.
struct MulConst : autograd::Function<MulConst> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->saved_data["k"].toDouble(), Tensor()};
  }
};

// y = a b: saves both inputs; reports needs_input_grad.
struct Product : autograd::Function<Product> {
  static inline std::vector<bool> needs;
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
    ctx->save_for_backward({a, b});
    return a * b;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    needs = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    auto s = ctx->get_saved_variables();
    Tensor ga = ctx->needs_input_grad(0) ? g[0] * s[1] : Tensor();
    Tensor gb = ctx->needs_input_grad(1) ? g[0] * s[0] : Tensor();
    return {ga, gb};
  }
};

// y = e^x, saving the output: dy/dx = y. Differentiable backward, so double backward works.
struct MyExp : autograd::Function<MyExp> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

// Two outputs: (2x, a float mask marked non-differentiable).
struct WithMask : autograd::Function<WithMask> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    Tensor mask = (x > 0).to(kFloat);
    ctx->mark_non_differentiable({mask});
    return {x * 2, mask};
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

// Two outputs (x, 3x); records whether backward saw undefined gradients.
struct Split : autograd::Function<Split> {
  static inline bool saw_undefined = false;
  static variable_list forward(AutogradContext* ctx, Tensor x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return {x * 1, x * 3};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    saw_undefined = !g[0].defined() || !g[1].defined();
    Tensor a = g[0].defined() ? g[0] : zeros_like(g[1]);
    Tensor b = g[1].defined() ? g[1] * 3 : zeros_like(g[0]);
    return {a + b, Tensor()};
  }
};

// Doubles its input in place and returns it (mark_dirty): dy/dx = 2.
struct DoubleInPlace : autograd::Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

struct Identity : autograd::Function<Identity> {
  static Tensor forward(AutogradContext*, Tensor x) { return x; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 7}; }
};

struct TooFew : autograd::Function<TooFew> {
  static Tensor forward(AutogradContext*, Tensor a, Tensor b) { return a + b; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

struct GradForDouble : autograd::Function<GradForDouble> {
  static Tensor forward(AutogradContext*, Tensor a, double) { return a * 1; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};

struct ExtraUndefined : autograd::Function<ExtraUndefined> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 1; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], Tensor(), Tensor()}; }
};

// Gradients of the wrong shape and dtype, which the engine checks or casts.
struct WrongShape : autograd::Function<WrongShape> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 1; }
  static variable_list backward(AutogradContext*, variable_list) { return {ones({3})}; }
};
struct Broadcasting : autograd::Function<Broadcasting> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 1; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0].expand({4, 2}) * 1}; }
};
struct DoubleGrad : autograd::Function<DoubleGrad> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 1; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0].to(kDouble) * 2}; }
};

}  // namespace

TEST_CASE("a custom function with a non-tensor argument") {
  Tensor x = leaf({1, 2});
  Tensor y = MulConst::apply(x, 3.0);
  check_close(y, {3, 6});
  CHECK(y.requires_grad());
  CHECK(y.grad_fn()->name() == "torch::autograd::CppNode<(anonymous namespace)::MulConst>");
  CHECK(y.grad_fn()->next_edges().size() == 1);
  y.sum().backward();
  check_close(x.grad(), {3, 3});
  check_grad([](const TensorList& in) { return MulConst::apply(in[0], -2.5); }, {rand_leaf({3})});
}

TEST_CASE("saved inputs and needs_input_grad") {
  Tensor a = leaf({1, 2});
  Tensor b = tensor({5.0f, 7.0f});
  Product::apply(a, b).sum().backward();
  CHECK(Product::needs == std::vector<bool>{true, false});
  check_close(a.grad(), {5, 7});
  check_grad([](const TensorList& in) { return Product::apply(in[0], in[1]); }, {rand_leaf({3}), rand_leaf({3})});
}

TEST_CASE("saving an output: correct gradient, no reference cycle, double backward") {
  Tensor x = leaf({0, 1});
  std::weak_ptr<autograd::Node> node;
  {
    Tensor y = MyExp::apply(x);
    node = y.grad_fn();
    y.sum().backward();
  }
  CHECK(node.expired());
  check_close(x.grad(), {1, std::exp(1.0)});
  check_grad([](const TensorList& in) { return MyExp::apply(in[0]); }, {rand_leaf({3})});
  check_gradgrad([](const TensorList& in) { return MyExp::apply(in[0]) * in[0]; }, {rand_leaf({3})});
}

TEST_CASE("saved tensors are version-checked and freed after backward") {
  Tensor x = leaf({0, 1});
  Tensor y = MyExp::apply(x);
  y.mul_(2);  // the saved output changes
  check_error([&] { y.sum().backward(); },
              "which is output 0 of torch::autograd::CppNode<(anonymous namespace)::MyExp>, is at version 1; "
              "expected version 0");

  Tensor z = MyExp::apply(x).sum();
  z.backward();
  check_error([&] { z.backward(); }, "Trying to backward through the graph a second time");
  // A function that saved nothing may be run again.
  Tensor w = MulConst::apply(x, 2.0).sum();
  w.backward();
  w.backward();
}

TEST_CASE("mark_non_differentiable") {
  Tensor x = leaf({-1, 2});
  variable_list out = WithMask::apply(x);
  CHECK(out[0].requires_grad());
  CHECK(!out[1].requires_grad());
  check_close(out[1], {0, 1});
  out[0].sum().backward();
  check_close(x.grad(), {2, 2});
}

TEST_CASE("materialized and undefined gradients") {
  Tensor x = leaf({1, 2});
  Split::apply(x, true)[1].sum().backward();  // output 0 unused: zeros arrive
  CHECK(!Split::saw_undefined);
  check_close(x.grad(), {3, 3});
  x.mutable_grad().reset();
  Split::apply(x, false)[1].sum().backward();
  CHECK(Split::saw_undefined);
  check_close(x.grad(), {3, 3});
}

TEST_CASE("mark_dirty: an input modified in place takes the function as history") {
  Tensor x = leaf({1, 2});
  Tensor h = x * 1;
  Tensor y = DoubleInPlace::apply(h);
  CHECK(y.is_same(h));
  CHECK(h.grad_fn()->name() == "torch::autograd::CppNode<(anonymous namespace)::DoubleInPlace>");
  check_close(h, {2, 4});
  (h * h).sum().backward();
  check_close(x.grad(), {8, 16});  // h = 2x, d/dx h^2 = 2h * 2
  check_error([&] { DoubleInPlace::apply(x); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
  check_grad([](const TensorList& in) {
    Tensor b = in[0].clone();
    DoubleInPlace::apply(b.narrow(0, 1, 2));  // a dirty view: its base goes through CopySlices
    return b * in[0];
  }, {rand_leaf({4})});
}

TEST_CASE("an input returned unchanged becomes a new tensor with history") {
  Tensor x = leaf({1, 2});
  Tensor y = Identity::apply(x);
  CHECK(!y.is_same(x));
  CHECK(x.is_leaf());
  CHECK(!y.is_leaf());
  CHECK(y.data_ptr() == x.data_ptr());
  y.sum().backward();
  check_close(x.grad(), {7, 7});
}

TEST_CASE("no graph without grad mode or without inputs that require grad") {
  Tensor x = leaf({1, 2});
  {
    NoGradGuard g;
    Tensor y = MulConst::apply(x, 2.0);
    CHECK(!y.requires_grad());
  }
  Tensor z = MulConst::apply(tensor({1.0f}), 2.0);
  CHECK(!z.requires_grad());
  check_close(z, {2});
}

TEST_CASE("backward must return one gradient per forward argument") {
  Tensor a = leaf({1}), b = leaf({2});
  check_error([&] { TooFew::apply(a, b).sum().backward(); },
              "returned an incorrect number of gradients (expected 2, got 1)");
  check_error([&] { TooFew::apply(a, b).sum().backward(); }, "function torch::autograd::CppNode<");
  check_error([&] { GradForDouble::apply(a, 1.0).sum().backward(); },
              "returned a gradient different that is defined at position 2, but the corresponding forward input "
              "was not a Variable");
  ExtraUndefined::apply(a).sum().backward();  // trailing undefined results are dropped
  check_close(a.grad(), {1});
}

TEST_CASE("the engine validates a custom function's gradients") {
  Tensor x = leaf({1, 2});
  check_error([&] { WrongShape::apply(x).sum().backward(); },
              "returned an invalid gradient at index 0 - got [3] but expected shape compatible with [2]");
  Broadcasting::apply(x).sum().backward();
  check_close(x.grad(), {4, 4});  // the (4, 2) gradient is summed down to (2)
  x.mutable_grad().reset();
  DoubleGrad::apply(x).sum().backward();
  CHECK(x.grad().dtype() == kFloat);  // cast back to the input's dtype
  check_close(x.grad(), {2, 2});
}
