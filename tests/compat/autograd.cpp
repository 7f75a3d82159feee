// Autograd: backward and accumulation, a small MLP-like expression, broadcasting and views,
// autograd::grad with create_graph (second derivatives), hooks, retain_grad, NoGradGuard.
#include "compat.h"

using compat::show;
using compat::show_flag;
using compat::show_text;

torch::Tensor leaf(torch::Tensor t) { return t.detach().requires_grad_(true); }

void basics() {
  auto x = leaf(torch::tensor({1.0, 2.0, 3.0}));
  auto y = (x * x).sum();
  y.backward();
  show("square_sum_grad", x.grad());
  (x * 3).sum().backward();
  show("accumulated_grad", x.grad());
  x.mutable_grad().zero_();
  (x.exp() * x).mean().backward();
  show("exp_mul_mean_grad", x.grad());
  x.mutable_grad().reset();
  show_flag("grad_reset", x.grad().defined());

  auto z = x * 2;
  z.backward(torch::tensor({1.0, 0.5, -1.0}));
  show("vector_backward_grad", x.grad());
  show_flag("x_is_leaf", x.is_leaf());
  show_flag("z_is_leaf", z.is_leaf());
  show_flag("z_requires_grad", z.requires_grad());
  show_text("mul_grad_fn", (x * x).grad_fn()->name());
  show_text("sum_grad_fn", z.sum().grad_fn()->name());
  show_text("matmul_grad_fn", torch::mm(x.view({1, 3}), x.view({3, 1})).grad_fn()->name());
  show_flag("leaf_has_no_grad_fn", x.grad_fn() == nullptr);
}

void mlp() {
  auto input = torch::linspace(-1, 1, 6).reshape({2, 3});
  auto w1 = leaf(torch::linspace(-0.5, 0.6, 12).reshape({3, 4}));
  auto b1 = leaf(torch::tensor({0.1, -0.2, 0.3, 0.0}));
  auto w2 = leaf(torch::linspace(0.3, -0.4, 8).reshape({4, 2}));
  auto b2 = leaf(torch::tensor({0.05, -0.05}));
  auto h = torch::tanh(input.matmul(w1) + b1);
  auto logits = h.matmul(w2) + b2;
  auto target = torch::tensor({{1.0, 0.0}, {0.0, 1.0}});
  auto probs = logits.sigmoid();
  auto loss = -(target * probs.log() + (1 - target) * (1 - probs).log()).mean();
  show("mlp_loss", loss);
  loss.backward();
  show("mlp_w1_grad", w1.grad());
  show("mlp_b1_grad", b1.grad());
  show("mlp_w2_grad", w2.grad());
  show("mlp_b2_grad", b2.grad());

  auto r = leaf(torch::tensor({{-1.0, 2.0}, {0.5, -0.25}}));
  auto out = (r.relu() * (r.abs() + 1).sqrt() + r.pow(3) / (r.abs() + 1)).logsumexp({1}).sum();
  out.backward();
  show("relu_pow_logsumexp_grad", r.grad());
}

void shapes() {
  auto a = leaf(torch::ones({2, 3}));
  auto b = leaf(torch::tensor({1.0, 2.0, 3.0}));
  auto s = leaf(torch::tensor(2.0));
  ((a + b) * s).sum().backward();
  show("broadcast_a_grad", a.grad());
  show("broadcast_b_grad", b.grad());
  show("broadcast_scalar_grad", s.grad());

  auto v = leaf(torch::arange(6, torch::kDouble));
  auto w = v.view({2, 3}).t();
  (w.narrow(0, 1, 2) * torch::tensor({{1.0, 10.0}, {100.0, 1000.0}})).sum().backward();
  show("view_t_narrow_grad", v.grad());
  v.mutable_grad().reset();
  v.index({torch::tensor({0, 0, 5})}).sum().backward();
  show("index_repeated_grad", v.grad());
  v.mutable_grad().reset();
  v.index({torch::indexing::Slice(1, {}, 2)}).pow(2).sum().backward();
  show("slice_step_grad", v.grad());
  v.mutable_grad().reset();
  v.expand({3, 6}).sum().backward();
  show("expand_grad", v.grad());

  auto m = leaf(torch::tensor({{1.0, 7.0, 3.0}, {4.0, 2.0, 9.0}}));
  std::get<0>(m.max(1)).sum().backward();
  show("max_dim_grad", m.grad());
  m.mutable_grad().reset();
  std::get<0>(m.sort(1, true)).select(1, 0).sum().backward();
  show("sort_grad", m.grad());
  m.mutable_grad().reset();
  std::get<0>(m.topk(2, 1)).mul(torch::tensor({1.0, 2.0})).sum().backward();
  show("topk_grad", m.grad());
  m.mutable_grad().reset();
  (m.cumsum(1) * m).sum().backward();
  show("cumsum_grad", m.grad());
  m.mutable_grad().reset();
  (m.var({1}) + m.std({0}).sum() + m.norm()).sum().backward();
  show("var_std_norm_grad", m.grad());
  m.mutable_grad().reset();
  m.max().backward();
  show("max_all_grad", m.grad());

  auto p = leaf(torch::tensor({{1.0, 2.0}, {3.0, 4.0}}));
  auto q = leaf(torch::tensor({{0.5}, {-1.0}}));
  torch::matmul(p, q).sum().backward();
  show("matmul_p_grad", p.grad());
  show("matmul_q_grad", q.grad());
}

void higher_order() {
  auto x = leaf(torch::tensor({0.5, 1.0, 2.0}));
  auto y = (x * x * x).sum();
  auto g = torch::autograd::grad({y}, {x}, {}, true, true)[0];
  show("first_derivative", g);
  show_flag("first_derivative_requires_grad", g.requires_grad());
  auto g2 = torch::autograd::grad({g.sum()}, {x})[0];
  show("second_derivative", g2);

  auto t = leaf(torch::tensor({0.3, -0.7}));
  auto u = t.sin() * t.exp();
  auto du = torch::autograd::grad({u}, {t}, {torch::ones({2})}, true, true)[0];
  auto d2u = torch::autograd::grad({du}, {t}, {torch::ones({2})})[0];
  show("sin_exp_d1", du);
  show("sin_exp_d2", d2u);

  auto a = leaf(torch::tensor({1.0, 2.0}));
  auto b = leaf(torch::tensor({3.0, -1.0}));
  auto grads = torch::autograd::grad({(a * b).sum()}, {a, b}, {torch::tensor(2.0)});
  show("grad_a_with_grad_output", grads[0]);
  show("grad_b_with_grad_output", grads[1]);
  show_flag("grad_leaves_dot_grad_alone", a.grad().defined());
  auto unused = torch::autograd::grad({(a * 2).sum()}, {a, b}, {}, {}, false, true);
  show("allow_unused_used", unused[0]);
  show_flag("allow_unused_unused_defined", unused[1].defined());

  // Gradient penalty: d/dw of |d(loss)/dx|^2.
  auto w = leaf(torch::tensor({0.5, -1.5}));
  auto xin = leaf(torch::tensor({1.0, 2.0}));
  auto loss = (w * xin).tanh().sum();
  auto gx = torch::autograd::grad({loss}, {xin}, {}, true, true)[0];
  gx.pow(2).sum().backward();
  show("gradient_penalty_w_grad", w.grad());
}

void hooks_and_modes() {
  auto x = leaf(torch::tensor({1.0, 2.0}));
  x.register_hook([](torch::Tensor g) { return g * 10; });
  (x * x).sum().backward();
  show("leaf_hook_scaled_grad", x.grad());

  auto a = leaf(torch::tensor({1.0, -1.0}));
  auto mid = a * 3;
  torch::Tensor seen;
  mid.register_hook([&seen](torch::Tensor g) { seen = g.clone(); });
  mid.register_hook([](torch::Tensor g) { return g + 1; });
  mid.retain_grad();
  (mid * mid).sum().backward();
  show("hook_saw", seen);
  show("retained_grad", mid.grad());
  show("after_hook_leaf_grad", a.grad());

  auto n = leaf(torch::tensor({1.0, 2.0}));
  {
    torch::NoGradGuard guard;
    auto k = n * 2;
    show_flag("no_grad_requires_grad", k.requires_grad());
    n.mul_(2);
  }
  show("no_grad_inplace_on_leaf", n);
  show_flag("grad_mode_restored", (n * 2).requires_grad());
  show_flag("detach_requires_grad", (n * 2).detach().requires_grad());
  auto d = n.detach();
  d.add_(1);
  show("detach_shares_storage", n);

  auto y = leaf(torch::tensor({2.0, 3.0}));
  auto v = y * 1;
  v.mul_(y);
  v.add_(1).sum().backward();
  show("inplace_on_nonleaf_grad", y.grad());

  auto s = leaf(torch::tensor({1.0, 2.0}));
  auto s2 = s * s;
  s2.sum().backward(torch::Tensor(), true);
  s2.sum().backward();
  show("retain_graph_twice_grad", s.grad());
}

int main() {
  basics();
  mlp();
  shapes();
  higher_order();
  hooks_and_modes();
  return 0;
}
