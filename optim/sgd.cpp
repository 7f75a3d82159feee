// SGD's update: PyTorch's _single_tensor_sgd, operation for operation, so trajectories match.
#include "ember/optim/sgd.h"

#include "ember/autograd/grad_mode.h"

namespace ember::optim {

namespace {
std::unique_ptr<OptimizerOptions> checked(const SGDOptions& o) {
  EMBER_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.momentum() >= 0, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
              "Nesterov momentum requires a momentum and zero dampening");
  return std::make_unique<SGDOptions>(o);
}
}  // namespace

std::vector<std::pair<std::string, double>> SGDOptions::named_values() const {
  return {{"lr", lr()},
          {"momentum", momentum()},
          {"dampening", dampening()},
          {"weight_decay", weight_decay()},
          {"nesterov", nesterov() ? 1.0 : 0.0}};
}
void SGDOptions::set_named_value(const std::string& name, double v) {
  if (name == "lr")
    lr(v);
  else if (name == "momentum")
    momentum(v);
  else if (name == "dampening")
    dampening(v);
  else if (name == "weight_decay")
    weight_decay(v);
  else if (name == "nesterov")
    nesterov(v != 0);
  else
    EMBER_CHECK(false, "SGD has no option named '", name, "'");
}
bool operator==(const SGDOptions& a, const SGDOptions& b) {
  return a.lr() == b.lr() && a.momentum() == b.momentum() && a.dampening() == b.dampening() &&
         a.weight_decay() == b.weight_decay() && a.nesterov() == b.nesterov();
}

std::vector<std::pair<std::string, Tensor>> SGDParamState::named_tensors() const {
  if (!momentum_buffer().defined()) return {};
  return {{"momentum_buffer", momentum_buffer()}};
}
void SGDParamState::set_named_tensor(const std::string& name, const Tensor& value) {
  EMBER_CHECK(name == "momentum_buffer", "SGD state has no entry named '", name, "'");
  momentum_buffer(value);
}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), checked(defaults)) {}
SGD::SGD(std::vector<Tensor> params, SGDOptions defaults) : Optimizer(std::move(params), checked(defaults)) {}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor d_p = p.grad();
      if (o.weight_decay() != 0) d_p = d_p.add(p, o.weight_decay());
      if (o.momentum() != 0) {
        auto& st = state_[p.unsafeGetTensorImpl()];
        if (!st) st = std::make_unique<SGDParamState>();
        auto& s = static_cast<SGDParamState&>(*st);
        if (!s.momentum_buffer().defined()) {
          s.momentum_buffer(d_p.detach().clone());  // the first buffer is the gradient itself
        } else {
          s.momentum_buffer().mul_(o.momentum()).add_(d_p, 1 - o.dampening());
        }
        d_p = o.nesterov() ? d_p.add(s.momentum_buffer(), o.momentum()) : s.momentum_buffer();
      }
      p.add_(d_p, -o.lr());
    }
  }
  return loss;
}

}  // namespace ember::optim
