// AdamW's update: PyTorch's _single_tensor_adamw; the moment and parameter update is Adam's
// (detail::adam_group_step, which also takes CUDA parameters to the fused kernels).
#include "ember/optim/adamw.h"

#include "ember/autograd/grad_mode.h"

namespace ember::optim {

std::vector<std::pair<std::string, double>> AdamWOptions::named_values() const {
  return detail::adam_named_values(lr(), betas(), eps(), weight_decay(), amsgrad());
}
void AdamWOptions::set_named_value(const std::string& name, double v) {
  detail::set_adam_named_value(*this, name, v, "AdamW");
}
bool operator==(const AdamWOptions& a, const AdamWOptions& b) { return detail::adam_options_equal(a, b); }

namespace {
std::unique_ptr<OptimizerOptions> checked(const AdamWOptions& o) {
  detail::check_adam_options(o.lr(), o.betas(), o.eps(), o.weight_decay());
  return std::make_unique<AdamWOptions>(o);
}
}  // namespace

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), checked(defaults)) {}
AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : Optimizer(std::move(params), checked(defaults)) {}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const AdamWOptions&>(group.options());
    // Decoupled decay: shrink the parameter itself (PyTorch does this even when it is 0, a
    // multiplication by 1 that changes nothing, so the step skips it then).
    detail::adam_group_step(
        group.params(), state_, [] { return std::make_unique<AdamWParamState>(); }, o.lr(), o.betas(), o.eps(),
        o.amsgrad(), o.weight_decay(), 0.0);
  }
  return loss;
}

}  // namespace ember::optim
