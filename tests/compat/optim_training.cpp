// Optimizers: five steps of SGD (plain, Nesterov, dampening + weight decay), Adam (plain,
// AMSGrad + weight decay), AdamW, RMSprop (plain, centered + momentum), Adagrad on a small
// deterministic regression; parameter groups with their own options, step with a closure,
// setting the lr by hand, a small classifier trained with cross entropy, and StepLR.
// Everything starts from sin(arange) values: no random numbers are involved.
#include "compat.h"

namespace F = torch::nn::functional;
namespace optim = torch::optim;
using compat::show;
using compat::show_flag;
using compat::show_int;

// Deterministic values of a given shape: scale * sin(0.7 * i + phase).
torch::Tensor wave(torch::IntArrayRef sizes, double phase, double scale = 0.5) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return (torch::sin(torch::arange(n, torch::kFloat) * 0.7 + phase) * scale).reshape(sizes);
}

void set_parameters(torch::nn::Module& module, double phase = 0.5) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    p.copy_(wave(p.sizes(), phase));
    phase += 1.0;
  }
}

// name = v1 v2 ...
void show_values(const std::string& name, const std::vector<double>& values) {
  std::printf("%s =", name.c_str());
  for (double v : values) std::printf(" %.6g", v);
  std::printf("\n");
}

// The regression: y = x w + b with a little curvature the linear model cannot fit.
torch::Tensor inputs() { return wave({8, 3}, 0.2, 1.0); }
torch::Tensor targets() {
  auto x = inputs();
  return x.matmul(torch::tensor({{0.5f}, {-1.0f}, {2.0f}})) + 0.3 + 0.1 * x.select(1, 0).unsqueeze(1).pow(2);
}

torch::nn::Linear fresh_model() {
  torch::nn::Linear model(3, 1);
  set_parameters(*model);
  return model;
}

// Five steps of make(parameters) on the regression; prints the losses and the final parameters.
template <class MakeOptimizer>
void train(const std::string& name, MakeOptimizer make) {
  auto model = fresh_model();
  auto optimizer = make(model->parameters());
  auto x = inputs(), y = targets();
  std::vector<double> losses;
  for (int step = 0; step < 5; ++step) {
    optimizer.zero_grad();
    auto loss = F::mse_loss(model(x), y);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  show_values(name + "_losses", losses);
  show((name + "_weight").c_str(), model->weight);
  show((name + "_bias").c_str(), model->bias);
}

void optimizers() {
  using P = std::vector<torch::Tensor>;
  train("sgd", [](P p) { return optim::SGD(p, optim::SGDOptions(0.1)); });
  train("sgd_nesterov", [](P p) { return optim::SGD(p, optim::SGDOptions(0.05).momentum(0.9).nesterov(true)); });
  train("sgd_dampening",
        [](P p) { return optim::SGD(p, optim::SGDOptions(0.05).momentum(0.5).dampening(0.1).weight_decay(0.01)); });
  train("adam", [](P p) { return optim::Adam(p, optim::AdamOptions(0.05)); });
  train("adam_amsgrad", [](P p) {
    return optim::Adam(p, optim::AdamOptions(0.05).betas(std::make_tuple(0.8, 0.9)).weight_decay(0.01).amsgrad(true));
  });
  train("adamw", [](P p) { return optim::AdamW(p, optim::AdamWOptions(0.05).weight_decay(0.1)); });
  train("adamw_amsgrad",
        [](P p) { return optim::AdamW(p, optim::AdamWOptions(0.02).eps(1e-6).amsgrad(true)); });
  train("rmsprop", [](P p) { return optim::RMSprop(p, optim::RMSpropOptions(0.01)); });
  train("rmsprop_centered", [](P p) {
    return optim::RMSprop(p, optim::RMSpropOptions(0.01).alpha(0.9).momentum(0.5).centered(true).weight_decay(0.01));
  });
  train("adagrad", [](P p) {
    return optim::Adagrad(p, optim::AdagradOptions(0.1).lr_decay(0.01).initial_accumulator_value(0.1));
  });
  train("adagrad_weight_decay", [](P p) { return optim::Adagrad(p, optim::AdagradOptions(0.2).weight_decay(0.05)); });
}

void param_groups() {
  auto model = fresh_model();
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{model->weight},
                      std::make_unique<optim::SGDOptions>(optim::SGDOptions(0.1).momentum(0.9)));
  groups.emplace_back(std::vector<torch::Tensor>{model->bias});
  optim::SGD optimizer(groups, optim::SGDOptions(0.01));
  show_int("group_count", static_cast<int64_t>(optimizer.param_groups().size()));
  show_int("parameter_count", static_cast<int64_t>(optimizer.size()));
  for (auto& group : optimizer.param_groups()) {
    auto& options = static_cast<optim::SGDOptions&>(group.options());
    show("group_lr", options.lr());
    show("group_momentum", options.momentum());
    show_int("group_params", static_cast<int64_t>(group.params().size()));
  }
  auto& defaults = static_cast<optim::SGDOptions&>(optimizer.defaults());
  show("defaults_lr", defaults.lr());

  auto x = inputs(), y = targets();
  std::vector<double> losses;
  for (int step = 0; step < 4; ++step) {
    // A closure recomputes the loss; step returns it.
    auto loss = optimizer.step([&] {
      optimizer.zero_grad();
      auto l = F::mse_loss(model(x), y);
      l.backward();
      return l;
    });
    losses.push_back(loss.item<double>());
    // Halve every group's lr by hand after the second step.
    if (step == 1)
      for (auto& group : optimizer.param_groups()) group.options().set_lr(group.options().get_lr() * 0.5);
  }
  show_values("groups_losses", losses);
  show("groups_weight", model->weight);
  show("groups_bias", model->bias);
  for (auto& group : optimizer.param_groups()) show("group_lr_after", group.options().get_lr());

  // A third group added later takes the defaults.
  auto extra = torch::ones({2}).requires_grad_(true);
  optimizer.add_param_group(optim::OptimizerParamGroup({extra}));
  show_int("group_count_after_add", static_cast<int64_t>(optimizer.param_groups().size()));
  show("added_group_lr", optimizer.param_groups()[2].options().get_lr());
  optimizer.zero_grad();
  (extra * torch::tensor({1.0f, -2.0f})).sum().backward();
  optimizer.step();
  show("added_group_param", extra);
}

void classifier() {
  torch::nn::Sequential net(torch::nn::Linear(4, 8), torch::nn::Tanh(), torch::nn::Linear(8, 3));
  set_parameters(*net, 0.3);
  auto x = wave({6, 4}, 0.9, 1.0);
  auto labels = torch::tensor({0, 1, 2, 1, 0, 2}, torch::kLong);
  optim::Adam optimizer(net->parameters(), optim::AdamOptions(0.02));
  std::vector<double> losses;
  for (int step = 0; step < 6; ++step) {
    optimizer.zero_grad();
    auto loss = F::cross_entropy(net->forward(x), labels);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  show_values("classifier_losses", losses);
  show_int("classifier_state_size", static_cast<int64_t>(optimizer.state().size()));
  for (const auto& item : net->named_parameters()) show(("classifier_" + item.key()).c_str(), item.value());
  torch::NoGradGuard no_grad;
  show("classifier_predictions", net->forward(x).argmax(1));
}

// libtorch 1.13's StepLR does not step when constructed (PyTorch's schedulers, and ember's,
// do), so its lr sequence lags one step behind PyTorch's; wording.txt accepts that one line.
void step_lr() {
  auto model = fresh_model();
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(1.0));
  optim::StepLR scheduler(optimizer, 2, 0.5);
  std::vector<double> lrs;
  for (int epoch = 0; epoch < 6; ++epoch) {
    optimizer.step();
    scheduler.step();
    lrs.push_back(optimizer.param_groups()[0].options().get_lr());
  }
  show_values("step_lr_lrs", lrs);
}

int main() {
  optimizers();
  param_groups();
  classifier();
  step_lr();
}
