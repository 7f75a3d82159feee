// Adam's update: PyTorch's _single_tensor_adam (non-capturable branch), operation for operation.
#include "ember/optim/adam.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"

namespace ember::optim {

namespace detail {
std::vector<std::pair<std::string, double>> adam_named_values(double lr,
                                                              const std::tuple<double, double>& betas,
                                                              double eps, double weight_decay, bool amsgrad) {
  return {{"lr", lr},   {"betas.0", std::get<0>(betas)}, {"betas.1", std::get<1>(betas)},
          {"eps", eps}, {"weight_decay", weight_decay},  {"amsgrad", amsgrad ? 1.0 : 0.0}};
}

void check_adam_options(double lr, const std::tuple<double, double>& betas, double eps, double weight_decay) {
  auto [b1, b2] = betas;
  EMBER_CHECK(lr >= 0, "Invalid learning rate: ", lr);
  EMBER_CHECK(eps >= 0, "Invalid epsilon value: ", eps);
  EMBER_CHECK(b1 >= 0 && b1 < 1, "Invalid beta parameter at index 0: ", b1);
  EMBER_CHECK(b2 >= 0 && b2 < 1, "Invalid beta parameter at index 1: ", b2);
  EMBER_CHECK(weight_decay >= 0, "Invalid weight_decay value: ", weight_decay);
}

void adam_update(Tensor& param, const Tensor& grad, AdamParamState& s, double lr,
                 const std::tuple<double, double>& betas, double eps, bool amsgrad) {
  auto [beta1, beta2] = betas;
  if (!s.exp_avg().defined()) {
    s.exp_avg(zeros_like(param));
    s.exp_avg_sq(zeros_like(param));
  }
  if (amsgrad && !s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(zeros_like(param));
  s.step(s.step() + 1);

  s.exp_avg().mul_(beta1).add_(grad, 1 - beta1);
  s.exp_avg_sq().mul_(beta2).addcmul_(grad, grad, 1 - beta2);

  const double step = static_cast<double>(s.step());
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);

  Tensor denom;
  if (amsgrad) {
    // Normalise by the largest second moment seen so far.
    s.max_exp_avg_sq().copy_(maximum(s.max_exp_avg_sq(), s.exp_avg_sq()));
    denom = (s.max_exp_avg_sq().sqrt() / bias_correction2_sqrt).add_(eps);
  } else {
    denom = (s.exp_avg_sq().sqrt() / bias_correction2_sqrt).add_(eps);
  }
  param.addcdiv_(s.exp_avg(), denom, -step_size);
}
}  // namespace detail

std::vector<std::pair<std::string, double>> AdamOptions::named_values() const {
  return detail::adam_named_values(lr(), betas(), eps(), weight_decay(), amsgrad());
}
void AdamOptions::set_named_value(const std::string& name, double v) {
  detail::set_adam_named_value(*this, name, v, "Adam");
}
bool operator==(const AdamOptions& a, const AdamOptions& b) { return detail::adam_options_equal(a, b); }

std::vector<std::pair<std::string, Tensor>> AdamParamState::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out{{"step", detail::step_tensor(step())}};
  if (exp_avg().defined()) out.emplace_back("exp_avg", exp_avg());
  if (exp_avg_sq().defined()) out.emplace_back("exp_avg_sq", exp_avg_sq());
  if (max_exp_avg_sq().defined()) out.emplace_back("max_exp_avg_sq", max_exp_avg_sq());
  return out;
}
void AdamParamState::set_named_tensor(const std::string& name, const Tensor& value) {
  if (name == "step")
    step(static_cast<int64_t>(value.item<double>()));
  else if (name == "exp_avg")
    exp_avg(value);
  else if (name == "exp_avg_sq")
    exp_avg_sq(value);
  else if (name == "max_exp_avg_sq")
    max_exp_avg_sq(value);
  else
    EMBER_CHECK(false, "Adam state has no entry named '", name, "'");
}

namespace {
std::unique_ptr<OptimizerOptions> checked(const AdamOptions& o) {
  detail::check_adam_options(o.lr(), o.betas(), o.eps(), o.weight_decay());
  return std::make_unique<AdamOptions>(o);
}
}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), checked(defaults)) {}
Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Optimizer(std::move(params), checked(defaults)) {}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());  // L2: added to the gradient
      auto& st = state_[p.unsafeGetTensorImpl()];
      if (!st) st = std::make_unique<AdamParamState>();
      detail::adam_update(p, grad, static_cast<AdamParamState&>(*st), o.lr(), o.betas(), o.eps(),
                          o.amsgrad());
    }
  }
  return loss;
}

}  // namespace ember::optim
