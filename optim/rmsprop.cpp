// RMSprop's update: PyTorch's _single_tensor_rmsprop, operation for operation.
#include "ember/optim/rmsprop.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember::optim {

std::vector<std::pair<std::string, double>> RMSpropOptions::named_values() const {
  return {{"lr", lr()},
          {"momentum", momentum()},
          {"alpha", alpha()},
          {"eps", eps()},
          {"centered", centered() ? 1.0 : 0.0},
          {"weight_decay", weight_decay()}};
}
void RMSpropOptions::set_named_value(const std::string& name, double v) {
  if (name == "lr")
    lr(v);
  else if (name == "momentum")
    momentum(v);
  else if (name == "alpha")
    alpha(v);
  else if (name == "eps")
    eps(v);
  else if (name == "centered")
    centered(v != 0);
  else if (name == "weight_decay")
    weight_decay(v);
  else
    EMBER_CHECK(false, "RMSprop has no option named '", name, "'");
}
bool operator==(const RMSpropOptions& a, const RMSpropOptions& b) {
  return a.lr() == b.lr() && a.alpha() == b.alpha() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.momentum() == b.momentum() && a.centered() == b.centered();
}

std::vector<std::pair<std::string, Tensor>> RMSpropParamState::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out{{"step", detail::step_tensor(step())}};
  if (square_avg().defined()) out.emplace_back("square_avg", square_avg());
  if (momentum_buffer().defined()) out.emplace_back("momentum_buffer", momentum_buffer());
  if (grad_avg().defined()) out.emplace_back("grad_avg", grad_avg());
  return out;
}
void RMSpropParamState::set_named_tensor(const std::string& name, const Tensor& value) {
  if (name == "step")
    step(static_cast<int64_t>(value.item<double>()));
  else if (name == "square_avg")
    square_avg(value);
  else if (name == "momentum_buffer")
    momentum_buffer(value);
  else if (name == "grad_avg")
    grad_avg(value);
  else
    EMBER_CHECK(false, "RMSprop state has no entry named '", name, "'");
}

namespace {
std::unique_ptr<OptimizerOptions> checked(const RMSpropOptions& o) {
  EMBER_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
  EMBER_CHECK(o.momentum() >= 0, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(o.alpha() >= 0, "Invalid alpha value: ", o.alpha());
  return std::make_unique<RMSpropOptions>(o);
}
}  // namespace

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), checked(defaults)) {}
RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : Optimizer(std::move(params), checked(defaults)) {}

Tensor RMSprop::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& st = state_[p.unsafeGetTensorImpl()];
      if (!st) st = std::make_unique<RMSpropParamState>();
      auto& s = static_cast<RMSpropParamState&>(*st);
      if (!s.square_avg().defined()) s.square_avg(zeros_like(p));
      if (o.momentum() > 0 && !s.momentum_buffer().defined()) s.momentum_buffer(zeros_like(p));
      if (o.centered() && !s.grad_avg().defined()) s.grad_avg(zeros_like(p));
      s.step(s.step() + 1);

      Tensor grad = p.grad();
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      s.square_avg().mul_(o.alpha()).addcmul_(grad, grad, 1 - o.alpha());
      Tensor avg;
      if (o.centered()) {
        // Centered: divide by an estimate of the gradient's standard deviation instead.
        s.grad_avg().mul_(o.alpha()).add_(grad, 1 - o.alpha());
        avg = s.square_avg().addcmul(s.grad_avg(), s.grad_avg(), -1).sqrt_();
      } else {
        avg = s.square_avg().sqrt();
      }
      avg.add_(o.eps());
      if (o.momentum() > 0) {
        s.momentum_buffer().mul_(o.momentum()).addcdiv_(grad, avg);
        p.add_(s.momentum_buffer(), -o.lr());
      } else {
        p.addcdiv_(grad, avg, -o.lr());
      }
    }
  }
  return loss;
}

}  // namespace ember::optim
