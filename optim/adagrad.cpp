// Adagrad's update: PyTorch's _single_tensor_adagrad (dense gradients), operation for operation.
#include "ember/optim/adagrad.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember::optim {

std::vector<std::pair<std::string, double>> AdagradOptions::named_values() const {
  return {{"lr", lr()},
          {"lr_decay", lr_decay()},
          {"eps", eps()},
          {"weight_decay", weight_decay()},
          {"initial_accumulator_value", initial_accumulator_value()}};
}
void AdagradOptions::set_named_value(const std::string& name, double v) {
  if (name == "lr")
    lr(v);
  else if (name == "lr_decay")
    lr_decay(v);
  else if (name == "eps")
    eps(v);
  else if (name == "weight_decay")
    weight_decay(v);
  else if (name == "initial_accumulator_value")
    initial_accumulator_value(v);
  else
    EMBER_CHECK(false, "Adagrad has no option named '", name, "'");
}
bool operator==(const AdagradOptions& a, const AdagradOptions& b) {
  return a.lr() == b.lr() && a.lr_decay() == b.lr_decay() && a.weight_decay() == b.weight_decay() &&
         a.initial_accumulator_value() == b.initial_accumulator_value() && a.eps() == b.eps();
}

std::vector<std::pair<std::string, Tensor>> AdagradParamState::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out{{"step", detail::step_tensor(step())}};
  if (sum().defined()) out.emplace_back("sum", sum());
  return out;
}
void AdagradParamState::set_named_tensor(const std::string& name, const Tensor& value) {
  if (name == "step")
    step(static_cast<int64_t>(value.item<double>()));
  else if (name == "sum")
    sum(value);
  else
    EMBER_CHECK(false, "Adagrad state has no entry named '", name, "'");
}

namespace {
std::unique_ptr<OptimizerOptions> checked(const AdagradOptions& o) {
  EMBER_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.lr_decay() >= 0, "Invalid lr_decay value: ", o.lr_decay());
  EMBER_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(o.initial_accumulator_value() >= 0,
              "Invalid initial_accumulator_value value: ", o.initial_accumulator_value());
  EMBER_CHECK(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
  return std::make_unique<AdagradOptions>(o);
}
}  // namespace

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), checked(defaults)) {}
Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Optimizer(std::move(params), checked(defaults)) {}

Tensor Adagrad::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& st = state_[p.unsafeGetTensorImpl()];
      if (!st) st = std::make_unique<AdagradParamState>();
      auto& s = static_cast<AdagradParamState&>(*st);
      // PyTorch fills the accumulator when the optimizer is built; doing it on first use is
      // the same, and also covers groups added later.
      if (!s.sum().defined()) s.sum(full_like(p, o.initial_accumulator_value()));
      s.step(s.step() + 1);

      Tensor grad = p.grad();
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      const double clr = o.lr() / (1 + static_cast<double>(s.step() - 1) * o.lr_decay());
      s.sum().addcmul_(grad, grad, 1);
      Tensor std = s.sum().sqrt().add_(o.eps());
      p.addcdiv_(grad, std, -clr);
    }
  }
  return loss;
}

}  // namespace ember::optim
