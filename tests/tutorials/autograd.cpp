// The C++ autograd tutorial, step by step: gradients of a small expression, vector-Jacobian
// products, NoGradGuard and detach, a gradient penalty through torch::autograd::grad with
// create_graph, and two custom autograd Functions (a linear layer with saved tensors, a
// multiplication by a constant kept in saved_data). Each result is checked against the value the
// tutorial states or against the same computation done with built-in ops.
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <string>

using torch::autograd::AutogradContext;
using torch::autograd::Function;
using torch::autograd::tensor_list;

static int failures = 0;

static void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok   " : "FAIL ") << what << std::endl;
  if (!ok) ++failures;
}

static double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

class LinearFunction : public Function<LinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) output += bias.unsqueeze(0).expand_as(output);
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0], weight = saved[1], bias = saved[2];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) grad_bias = grad_output.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

class MulConstant : public Function<MulConstant> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

int main() {
  torch::manual_seed(0);

  // out = mean(3 (x + 2)^2) with x = ones: d out / dx = 6 (x + 2) / 4 = 4.5.
  auto x = torch::ones({2, 2}, torch::requires_grad());
  auto y = x + 2;
  auto z = y * y * 3;
  auto out = z.mean();
  std::cout << "y.grad_fn: " << y.grad_fn()->name() << std::endl;
  out.backward();
  check(max_diff(x.grad(), torch::full({2, 2}, 4.5)) == 0, "x.grad() is 4.5 everywhere");

  auto a = torch::randn({2, 2});
  a = ((a * 3) / (a - 1));
  check(!a.requires_grad(), "a does not require grad");
  a.requires_grad_(true);
  auto b = (a * a).sum();
  check(b.requires_grad() && b.grad_fn() != nullptr, "b has a grad_fn once a requires grad");

  // A vector-Jacobian product: y = x * 2^k, so x.grad = v * 2^k.
  x = torch::randn(3, torch::requires_grad());
  y = x * 2;
  int doublings = 1;
  while (y.norm().item<double>() < 1000) {
    y = y * 2;
    ++doublings;
  }
  auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
  y.backward(v);
  check(max_diff(x.grad(), v * std::pow(2.0, doublings)) < 1e-3, "vector-Jacobian product");

  {
    torch::NoGradGuard no_grad;
    check(!x.pow(2).requires_grad(), "no grad under NoGradGuard");
  }
  check(!x.detach().requires_grad() && x.detach().eq(x).all().item<bool>(), "detach keeps values, drops grad");

  // A gradient penalty: grad of the output w.r.t. the input, kept in the graph.
  auto model = torch::nn::Linear(4, 3);
  auto input = torch::randn({3, 4}).requires_grad_(true);
  auto output = model(input);
  auto loss = torch::nn::functional::mse_loss(output, torch::ones_like(output));
  auto grad_output = torch::ones_like(output);
  auto gradient = torch::autograd::grad({output}, {input}, /*grad_outputs=*/{grad_output}, /*retain_graph=*/c10::nullopt,
                                        /*create_graph=*/true)[0];
  // d output / d input summed over outputs is the column sums of the weight, for every row.
  check(max_diff(gradient, model->weight.sum(0).unsqueeze(0).expand({3, 4})) < 1e-6, "autograd::grad of a linear layer");
  auto gradient_penalty = torch::pow((gradient.norm(2, /*dim=*/1) - 1), 2).mean();
  auto combined_loss = loss + gradient_penalty;
  combined_loss.backward();
  check(model->weight.grad().defined() && input.grad().defined(), "backward through the penalty reaches both");

  // The custom Functions against the same computations with built-in ops.
  auto xi = torch::randn({2, 3}).requires_grad_();
  auto weight = torch::randn({4, 3}).requires_grad_();
  auto bias = torch::randn({4}).requires_grad_();
  LinearFunction::apply(xi, weight, bias).pow(2).sum().backward();
  auto xi2 = xi.detach().clone().requires_grad_(), w2 = weight.detach().clone().requires_grad_(),
       b2 = bias.detach().clone().requires_grad_();
  torch::nn::functional::linear(xi2, w2, b2).pow(2).sum().backward();
  check(max_diff(xi.grad(), xi2.grad()) < 1e-5 && max_diff(weight.grad(), w2.grad()) < 1e-5 &&
            max_diff(bias.grad(), b2.grad()) < 1e-5,
        "LinearFunction's gradients equal linear()'s");

  auto m = torch::randn({5}).requires_grad_();
  MulConstant::apply(m, 5.5).sum().backward();
  check(max_diff(m.grad(), torch::full({5}, 5.5)) == 0, "MulConstant's gradient is the constant");

  std::cout << (failures ? "FAILED" : "all ok") << std::endl;
  return failures ? 1 : 0;
}
