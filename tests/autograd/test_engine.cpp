// The backward engine: seeds and their errors, accumulation, retain_graph, create_graph and
// higher-order gradients, autograd::grad, backward(inputs=...), graph shapes (diamonds,
// several roots), node names and edges, gradient validation, order and graph lifetime.
// Expected values are worked by hand in the comments.
#include <memory>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;

namespace {

Tensor leaf(std::initializer_list<float> v) { return tensor(std::vector<float>(v), requires_grad()); }

/// A node made by hand: returns `n` copies of its incoming gradient, whatever its edges say.
struct Repeat final : autograd::Node {
  size_t n;
  explicit Repeat(size_t copies) : n(copies) {}
  std::string name() const override { return "RepeatBackward"; }
  TensorList apply(TensorList&& grads) override { return TensorList(n, grads[0]); }
};

/// out = x * 1 whose grad_fn is `node` with an edge to x.
Tensor through(const std::shared_ptr<autograd::Node>& node, const Tensor& x) {
  Tensor out = x.detach().clone();
  node->mutable_next_edges().push_back(autograd::gradient_edge(x));
  node->input_metadata().push_back({DimVector(out.sizes()), out.dtype(), out.device()});
  autograd::set_history(out, node, 0);
  return out;
}

}  // namespace

TEST_CASE("backward from a scalar") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = (x * x).sum();
  y.backward();
  check_close(x.grad(), {2, 4, 6});  // d/dx sum x^2 = 2x
  CHECK(x.grad().dtype() == kFloat);
  CHECK(!x.grad().requires_grad());
}

TEST_CASE("backward from a 0-dim tensor and a one-element tensor") {
  Tensor x = leaf({3});
  (x * x).view({1, 1}).backward();  // one element: an implicit gradient of 1 is allowed
  check_close(x.grad(), {6});
  Tensor s = tensor(2.0, requires_grad());
  (s * s * s).backward();
  check_close(s.grad(), {12});  // 3 s^2
}

TEST_CASE("backward with an explicit gradient on a non-scalar") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = x * x;
  y.backward(tensor({1.0, 0.5, -1.0}));
  check_close(x.grad(), {2, 2, -6});  // 2x * v
}

TEST_CASE("backward seed errors") {
  Tensor x = leaf({1, 2, 3});
  check_error([&] { (x * x).backward(); }, "grad can be implicitly created only for scalar outputs");
  check_error([&] { tensor({1.0, 2.0}).sum().backward(); },
              "element 0 of tensors does not require grad and does not have a grad_fn");
  check_error([&] { autograd::backward({x.sum(), tensor(1.0)}); },
              "element 1 of tensors does not require grad and does not have a grad_fn");
  check_error([&] { autograd::backward({x.sum(), x.sum()}, {tensor(1.0)}); }, "got 2 tensors and 1 gradients");
  check_error([&] { (x * 2).backward(ones({2})); },
              "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
              "torch.Size([3]).");
  CHECK(!x.grad().defined());
}

TEST_CASE("gradients accumulate across backward calls") {
  Tensor x = leaf({1, 2});
  (x * 3).sum().backward();
  (x * x).sum().backward();
  check_close(x.grad(), {3 + 2, 3 + 4});  // 3 + 2x
  x.mutable_grad().reset();
  (x * 3).sum().backward();
  check_close(x.grad(), {3, 3});
}

TEST_CASE("retain_graph and the second backward") {
  Tensor x = leaf({0, 1});
  Tensor y = x.exp().sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  check_close(x.grad(), {2 * std::exp(0.0), 2 * std::exp(1.0)});
  check_error([&] { y.backward(); },
              "Trying to backward through the graph a second time (or directly access saved tensors after they "
              "have already been freed). Saved intermediate values of the graph are freed when you call "
              ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
              "a second time or if you need to access saved tensors after calling backward.");
  // A graph whose nodes saved nothing can be run again, as in PyTorch.
  Tensor z = (x + 1).sum();
  z.backward();
  z.backward();
  check_close(x.grad(), {2 * std::exp(0.0) + 2, 2 * std::exp(1.0) + 2});
}

TEST_CASE("create_graph gives higher-order derivatives") {
  Tensor x = tensor(2.0, requires_grad());
  Tensor y = x * x * x;
  Tensor g1 = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  check_close(g1, {12});  // 3x^2
  REQUIRE(g1.requires_grad());
  Tensor g2 = autograd::grad({g1}, {x}, {}, std::nullopt, true)[0];
  check_close(g2, {12});  // 6x
  Tensor g3 = autograd::grad({g2}, {x})[0];
  check_close(g3, {6});
  CHECK(!g3.requires_grad());
  CHECK(!x.grad().defined());  // grad() does not touch .grad

  // backward(create_graph) leaves a .grad that can itself be differentiated.
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  (w * w * w).sum().backward({}, std::nullopt, /*create_graph=*/true);
  Tensor gw = w.grad();
  REQUIRE(gw.requires_grad());
  check_close(gw, {3, 12});
  Tensor h = autograd::grad({gw.sum()}, {w})[0];
  check_close(h, {6, 12});  // d/dw 3w^2
  // As in PyTorch, backward(create_graph=true) makes a cycle w -> w.grad -> graph -> w;
  // resetting .grad breaks it (LeakSanitizer checks that nothing else leaks).
  w.mutable_grad() = Tensor();
}

TEST_CASE("third derivative of sin") {
  // d/dx sin = cos, d2 = -sin, d3 = -cos
  Tensor x = tensor({0.3, -1.2}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor g1 = autograd::grad({x.sin().sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor g2 = autograd::grad({g1.sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor g3 = autograd::grad({g2.sum()}, {x})[0];
  check_close(g1, {std::cos(0.3), std::cos(-1.2)});
  check_close(g2, {-std::sin(0.3), -std::sin(-1.2)});
  check_close(g3, {-std::cos(0.3), -std::cos(-1.2)});
}

TEST_CASE("mixed second derivative") {
  // f = x^2 y; df/dx = 2xy; d/dy (df/dx) = 2x.
  Tensor x = tensor(3.0, requires_grad()), y = tensor(5.0, requires_grad());
  Tensor dx = autograd::grad({x * x * y}, {x}, {}, std::nullopt, true)[0];
  check_close(dx, {30});
  check_close(autograd::grad({dx}, {y})[0], {6});
}

TEST_CASE("autograd::grad: allow_unused and errors") {
  Tensor x = leaf({1, 2}), z = leaf({5, 6});
  Tensor y = (x * x).sum();
  check_error([&] { autograd::grad({y}, {x, z}, {}, true); },
              "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
              "if this is the desired behavior.");
  TensorList g = autograd::grad({y}, {x, z}, {}, true, false, /*allow_unused=*/true);
  check_close(g[0], {2, 4});
  CHECK(!g[1].defined());
  check_error([&] { autograd::grad({y}, {tensor({1.0})}, {}, true); },
              "One of the differentiated Tensors does not require grad");
  check_error([&] { autograd::grad({y}, {}, {}, true); }, "grad requires non-empty inputs.");
  check_error([&] { autograd::grad({tensor(1.0)}, {x}); },
              "element 0 of tensors does not require grad and does not have a grad_fn");
  CHECK(!x.grad().defined());
}

TEST_CASE("autograd::grad with grad_outputs and several outputs") {
  Tensor x = leaf({1, 2});
  Tensor a = x * x, b = x * 3;
  // sum_i v_i (x_i^2) + w_i (3 x_i) -> 2 x v + 3 w
  TensorList g = autograd::grad({a, b}, {x}, {tensor({1.0, 10.0}), tensor({100.0, 1000.0})});
  check_close(g[0], {2 + 300, 40 + 3000});
  // The same input twice gets the same gradient twice.
  TensorList twice = autograd::grad({(x * 2).sum()}, {x, x});
  check_close(twice[0], {2, 2});
  check_close(twice[1], {2, 2});
}

TEST_CASE("autograd::grad on non-leaf inputs") {
  Tensor x = leaf({1, 2});
  Tensor h = x * 2;
  Tensor y = (h * h).sum();
  TensorList g = autograd::grad({y}, {h}, {}, /*retain_graph=*/true);
  check_close(g[0], {4, 8});  // 2h
  TensorList both = autograd::grad({y}, {h, x});
  check_close(both[0], {4, 8});
  check_close(both[1], {8, 16});  // 2h * 2
  CHECK(!x.grad().defined());
  CHECK(!h.grad().defined());
}

TEST_CASE("grad w.r.t. a non-leaf does not run the nodes behind it") {
  // h's node is a capture target only: its saved tensors stay, so a later backward works.
  Tensor x = leaf({1, 2});
  Tensor h = x.exp();
  Tensor y = (h * 3).sum();
  check_close(autograd::grad({y}, {h})[0], {3, 3});
  Tensor y2 = h.sum();
  y2.backward();
  check_close(x.grad(), {std::exp(1.0), std::exp(2.0)});
}

TEST_CASE("backward(inputs=...) accumulates only into the given tensors") {
  Tensor x = leaf({1, 2}), w = leaf({3, 4});
  (x * w).sum().backward({}, std::nullopt, false, {x});
  check_close(x.grad(), {3, 4});
  CHECK(!w.grad().defined());

  Tensor h = x * 2;
  Tensor y = (h * h).sum();
  y.backward({}, std::nullopt, false, {h});  // a non-leaf gets its .grad through retain_grad
  CHECK(h.retains_grad());
  check_close(h.grad(), {4, 8});
  check_close(x.grad(), {3, 4});  // unchanged
  check_error([&] { (x * 2).sum().backward({}, std::nullopt, false, {tensor({1.0})}); },
              "One of the differentiated Tensors does not require grad");
}

TEST_CASE("diamonds: one tensor used twice") {
  Tensor x = leaf({1, 2});
  (x * x).sum().backward();
  check_close(x.grad(), {2, 4});

  // a = e^x, b = a*a + a: db/dx = 2 e^{2x} + e^x
  Tensor z = leaf({0, 1});
  Tensor a = z.exp();
  (a * a + a).sum().backward();
  check_close(z.grad(), {2 + 1, 2 * std::exp(2.0) + std::exp(1.0)}, 1e-5);
}

TEST_CASE("several roots") {
  Tensor x = leaf({1, 2});
  autograd::backward({(x * x).sum(), (x * 3).sum()});
  check_close(x.grad(), {2 + 3, 4 + 3});

  // One root feeds the other: y = sum x^2, z = 3y; backward({y, z}) = 2x + 6x.
  Tensor w = leaf({1, 2});
  Tensor y = (w * w).sum();
  Tensor z = y * 3;
  autograd::backward({y, z});
  check_close(w.grad(), {8, 16});

  // The same root twice: its seeds add up.
  Tensor v = leaf({1});
  Tensor s = (v * 5).sum();
  autograd::backward({s, s}, {tensor(1.0f), tensor(2.0f)});
  check_close(v.grad(), {15});
}

TEST_CASE("grad_fn names follow PyTorch") {
  Tensor x = leaf({1, 2}), w = leaf({3, 4});
  CHECK((x * w).grad_fn()->name() == "MulBackward0");
  CHECK((x + w).grad_fn()->name() == "AddBackward0");
  CHECK((x - w).grad_fn()->name() == "SubBackward0");
  CHECK((x / w).grad_fn()->name() == "DivBackward0");
  CHECK((-x).grad_fn()->name() == "NegBackward0");
  CHECK(x.exp().grad_fn()->name() == "ExpBackward0");
  CHECK(x.sum().grad_fn()->name() == "SumBackward0");
  CHECK(x.mean().grad_fn()->name() == "MeanBackward0");
  CHECK(x.clone().grad_fn()->name() == "CloneBackward0");
  CHECK(x.to(kDouble).grad_fn()->name() == "ToCopyBackward0");
  CHECK(x.view({2, 1}).grad_fn()->name() == "ViewBackward0");
  CHECK(x.select(0, 1).grad_fn()->name() == "SelectBackward0");
  CHECK(x.slice(0, 0, 1).grad_fn()->name() == "SliceBackward0");
  CHECK(x.expand({3, 2}).grad_fn()->name() == "ExpandBackward0");
  CHECK((x * w).grad_fn()->next_edge(0).function->name() == "torch::autograd::AccumulateGrad");
  CHECK(!x.grad_fn());
  CHECK(x.is_leaf());
  CHECK(!(x * w).is_leaf());
}

TEST_CASE("next_edges point at the inputs' nodes") {
  Tensor x = leaf({1, 2});
  Tensor c = tensor({5.0f, 6.0f});  // needs no gradient: an invalid edge
  Tensor y = x * c;
  const auto& edges = y.grad_fn()->next_edges();
  REQUIRE(edges.size() == 2);
  CHECK(edges[0].is_valid());
  CHECK(!edges[1].is_valid());
  auto acc = std::dynamic_pointer_cast<autograd::AccumulateGrad>(edges[0].function);
  REQUIRE(acc);
  CHECK(acc->variable().is_same(x));
  CHECK(autograd::gradient_edge(x).function == edges[0].function);  // one accumulator per leaf

  Tensor e = x.exp();
  Tensor sq = e * e;  // both edges lead to ExpBackward0, input 0
  CHECK(sq.grad_fn()->next_edge(0).function == e.grad_fn());
  CHECK(sq.grad_fn()->next_edge(1).function == e.grad_fn());
  CHECK(sq.grad_fn()->next_edge(1).input_nr == 0);
  CHECK(sq.grad_fn()->num_inputs() == 1);
  CHECK(sq.grad_fn()->sequence_nr() > e.grad_fn()->sequence_nr());
}

TEST_CASE("the engine sums broadcast gradients and casts dtypes") {
  // (2,3) * (3): the (3)-input's gradient arrives as (2,3) and is summed over dim 0.
  Tensor a = ones({2, 3}, requires_grad());
  Tensor b = tensor({1.0f, 2.0f, 3.0f}, requires_grad());
  (a * b).sum().backward();
  check_close(b.grad(), {2, 2, 2});
  check_close(a.grad(), {1, 2, 3, 1, 2, 3});

  // A float64 seed for a float32 output: the gradient is cast to float32.
  Tensor x = leaf({1, 2});
  (x * 2).backward(tensor({1.0, 1.0}, kDouble));
  CHECK(x.grad().dtype() == kFloat);
  check_close(x.grad(), {2, 2});

  // A float64 tensor made from a float32 leaf: the gradient comes back as float32.
  Tensor y = leaf({1, 2});
  (y.to(kDouble) * 3).sum().backward();
  CHECK(y.grad().dtype() == kFloat);
  check_close(y.grad(), {3, 3});
}

TEST_CASE("the engine rejects gradients of the wrong shape or count") {
  Tensor x = leaf({1, 2});
  auto wrong_count = std::make_shared<Repeat>(2);  // one edge, two gradients
  Tensor y = through(wrong_count, x);
  check_error([&] { y.sum().backward(); },
              "Function RepeatBackward returned an invalid number of gradients - expected 1, but got 2");
}

TEST_CASE("ready nodes run highest sequence number first") {
  // c is made before d, so d's node has the higher sequence number and runs first even
  // though y = c + d lists c first.
  Tensor x = leaf({1});
  std::vector<std::string> order;
  Tensor c = x * 3;
  Tensor d = x * 2;
  c.register_hook([&](const Tensor&) { order.push_back("c"); });
  d.register_hook([&](const Tensor&) { order.push_back("d"); });
  (c + d).sum().backward();
  CHECK(order == std::vector<std::string>{"d", "c"});

  // A chain runs strictly from the root down whatever the creation order of branches.
  order.clear();
  Tensor p = x * 1;
  Tensor q = p * 1;
  Tensor r = x * 1;  // newest, but r runs only when ready
  p.register_hook([&](const Tensor&) { order.push_back("p"); });
  q.register_hook([&](const Tensor&) { order.push_back("q"); });
  r.register_hook([&](const Tensor&) { order.push_back("r"); });
  (q + r).sum().backward();
  CHECK(order == std::vector<std::string>{"r", "q", "p"});
}

TEST_CASE("a backward pass is deterministic") {
  Tensor x = rand({64}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  auto run = [&] {
    x.mutable_grad().reset();
    Tensor a = x.exp(), b = x * x;
    (a * b + a / (b + 1) - b).sum().backward();
    return ember::test::values(x.grad());
  };
  CHECK(run() == run());
}

TEST_CASE("the graph is freed with its outputs") {
  Tensor x = leaf({1, 2});
  std::weak_ptr<autograd::Node> mul, exp, acc;
  {
    Tensor e = x.exp();  // ExpBackward0 saves its output: must not form a cycle
    Tensor y = e * x;
    mul = y.grad_fn();
    exp = e.grad_fn();
    acc = autograd::gradient_edge(x).function;
    CHECK(!mul.expired());
  }
  CHECK(mul.expired());
  CHECK(exp.expired());
  CHECK(acc.expired());
  CHECK(x.use_count() == 1);  // no node holds the leaf any more

  // After backward (saved tensors released) the graph still goes away with its output.
  std::weak_ptr<autograd::Node> kept;
  {
    Tensor y = (x.exp() * x).sum();
    kept = y.grad_fn();
    y.backward();
  }
  CHECK(kept.expired());
}

TEST_CASE("a long chain is built, run and freed without deep recursion") {
  Tensor x = leaf({1});
  std::weak_ptr<autograd::Node> first;
  {
    Tensor y = x + 1;
    first = y.grad_fn();
    for (int i = 0; i < 30000; ++i) y = y + 1;
    y.backward();
    check_close(x.grad(), {1});
  }
  CHECK(first.expired());
}

TEST_CASE("empty tensors and zero-size dims") {
  Tensor x = zeros({0, 3}, requires_grad());
  (x * 2).sum().backward();
  REQUIRE(x.grad().defined());
  CHECK(ember::test::shape(x.grad()) == std::vector<int64_t>{0, 3});
  Tensor y = zeros({2, 0}, requires_grad());
  Tensor g = autograd::grad({(y.exp() * y).sum()}, {y})[0];
  CHECK(ember::test::shape(g) == std::vector<int64_t>{2, 0});
}

TEST_CASE("backward from a leaf and hooks on the root") {
  Tensor x = leaf({1, 2});
  Tensor seed = tensor({3.0f, 4.0f});
  x.backward(seed);
  check_close(x.grad(), {3, 4});
  CHECK(!x.grad().is_same(seed));  // a copy: later accumulation must not write into seed
  x.backward(seed);
  check_close(seed, {3, 4});
  check_close(x.grad(), {6, 8});

  Tensor w = leaf({1});
  Tensor y = (w * 5).sum();
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) { seen = ember::test::values(g); return g * 2; });
  y.backward();
  CHECK(seen == std::vector<double>{1});
  check_close(w.grad(), {10});
}
