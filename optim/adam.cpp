// Adam's update: PyTorch's _single_tensor_adam (non-capturable branch), operation for operation.
// Dense float CPU parameters take a fused pass (core/cpu/adam.cpp); CUDA parameters are stepped
// together, a device and dtype at a time, by the fused multi-tensor kernels (cuda/optim.h), with
// the same operations and the same host-computed bias corrections.
#include "ember/optim/adam.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/adam.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/optim_math.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/optim.h"
#include "ember/optim/fused_step.h"

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

namespace {
/// The step size and sqrt of the second bias correction at step `step` (counted from 1),
/// computed in double on the host as PyTorch's single-tensor Adam does; every path (tensor
/// ops, the fused CPU pass, the CUDA kernels) uses these.
struct BiasCorrections {
  double step_size;
  double bias_correction2_sqrt;
};
BiasCorrections bias_corrections(double lr, const std::tuple<double, double>& betas, int64_t step_count) {
  auto [beta1, beta2] = betas;
  const double step = static_cast<double>(step_count);
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  return {lr / bias_correction1, std::sqrt(bias_correction2)};
}
}  // namespace

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

  const auto [step_size, bias_correction2_sqrt] = bias_corrections(lr, betas, s.step());

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

void adam_step_reference(Tensor& param, const Tensor& grad, AdamParamState& s, double lr,
                         const std::tuple<double, double>& betas, double eps, bool amsgrad,
                         double decoupled_decay, double l2) {
  // AdamW: shrink the parameter itself (PyTorch does this even when the decay is 0).
  if (decoupled_decay != 0) param.mul_(1 - lr * decoupled_decay);
  Tensor g = l2 != 0 ? grad.add(param, l2) : grad;  // Adam's L2: added to the gradient
  adam_update(param, g, s, lr, betas, eps, amsgrad);
}

void adam_step(Tensor& param, const Tensor& grad, AdamParamState& s, double lr,
               const std::tuple<double, double>& betas, double eps, bool amsgrad, double decoupled_decay,
               double l2) {
  const bool fused = (param.dtype() == kFloat || param.dtype() == kDouble) && !param.is_cuda() &&
                     param.is_contiguous() && cpu_dense_like(grad, param) && !grad.is_same(param) &&
                     (decoupled_decay == 0 || l2 == 0) && param.numel() > 0;
  if (!fused) return adam_step_reference(param, grad, s, lr, betas, eps, amsgrad, decoupled_decay, l2);
  if (!s.exp_avg().defined()) {
    s.exp_avg(zeros_like(param));
    s.exp_avg_sq(zeros_like(param));
  }
  if (amsgrad && !s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(zeros_like(param));
  const bool states_dense = cpu_dense_like(s.exp_avg(), param) && cpu_dense_like(s.exp_avg_sq(), param) &&
                            (!amsgrad || cpu_dense_like(s.max_exp_avg_sq(), param));
  if (!states_dense) return adam_step_reference(param, grad, s, lr, betas, eps, amsgrad, decoupled_decay, l2);
  // Named copies, not a structured binding: the lambda below captures them (Clang 14 cannot).
  const double beta1 = std::get<0>(betas), beta2 = std::get<1>(betas);
  s.step(s.step() + 1);
  // The scalars exactly as adam_update computes them, then converted to T as the ops do.
  const BiasCorrections bc = bias_corrections(lr, betas, s.step());
  const double step_size = bc.step_size, bias_correction2_sqrt = bc.bias_correction2_sqrt;
  visit_float_dtype(param.dtype(), "adam", [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const AdamScalars<T> k{static_cast<T>(1 - lr * decoupled_decay), static_cast<T>(l2), static_cast<T>(beta1),
                             static_cast<T>(1 - beta1), static_cast<T>(beta2), static_cast<T>(1 - beta2),
                             static_cast<T>(bias_correction2_sqrt), static_cast<T>(eps), static_cast<T>(-step_size)};
      cpu::adam_fused<T>(param.data_ptr<T>(), grad.data_ptr<T>(), s.exp_avg().data_ptr<T>(), s.exp_avg_sq().data_ptr<T>(),
                    amsgrad ? s.max_exp_avg_sq().data_ptr<T>() : nullptr, param.numel(), k, decoupled_decay != 0,
                    l2 != 0);
    }
  });
  // The in-place ops would each bump the versions; one bump per tensor written is enough to
  // invalidate saved copies.
  for (const Tensor* t : {&param, &s.exp_avg(), &s.exp_avg_sq()}) t->unsafeGetTensorImpl()->storage()->bump_version();
  if (amsgrad) s.max_exp_avg_sq().unsafeGetTensorImpl()->storage()->bump_version();
}

namespace {

/// Whether a parameter's whole Adam step can run in the fused CUDA kernels (its existing
/// state included).
bool adam_cuda_fusable(const Tensor& param, const AdamParamState& s, bool amsgrad) {
  if (!cuda_fusable(param, param.grad())) return false;
  if (s.exp_avg().defined() != s.exp_avg_sq().defined()) return false;
  return cuda_state_fits(s.exp_avg(), param) && cuda_state_fits(s.exp_avg_sq(), param) &&
         (!amsgrad || cuda_state_fits(s.max_exp_avg_sq(), param));
}

/// The fused CUDA step of `params` (all adam_cuda_fusable). Every allocation (new state, a
/// contiguous copy of a strided gradient) comes before any step is counted, so a CUDA
/// out-of-memory error leaves parameters and state as they were, ready for a retry.
void adam_step_cuda(const std::vector<Tensor>& params, const std::vector<AdamParamState*>& states, double lr,
                    const std::tuple<double, double>& betas, double eps, bool amsgrad, double decoupled_decay,
                    double l2) {
  std::vector<Tensor> grads;
  grads.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    AdamParamState& s = *states[i];
    if (!s.exp_avg().defined()) {
      s.exp_avg(zeros_like(params[i]));
      s.exp_avg_sq(zeros_like(params[i]));
    }
    if (amsgrad && !s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(zeros_like(params[i]));
    grads.push_back(params[i].grad().contiguous());
  }
  const cuda::AdamStepArgs args{lr, std::get<0>(betas), std::get<1>(betas), eps, decoupled_decay, l2, amsgrad};
  for (const std::vector<size_t>& group : group_by_device_and_dtype(params)) {
    std::vector<Tensor> exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
    std::vector<double> step_size, bias_correction2_sqrt;
    for (size_t i : group) {
      AdamParamState& s = *states[i];
      s.step(s.step() + 1);
      const BiasCorrections bc = bias_corrections(lr, betas, s.step());
      step_size.push_back(bc.step_size);
      bias_correction2_sqrt.push_back(bc.bias_correction2_sqrt);
      exp_avgs.push_back(s.exp_avg());
      exp_avg_sqs.push_back(s.exp_avg_sq());
      if (amsgrad) max_exp_avg_sqs.push_back(s.max_exp_avg_sq());
    }
    const std::vector<Tensor> ps = pick(params, group);
    cuda::adam_step(ps, pick(grads, group), exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step_size, bias_correction2_sqrt,
                    args);
    bump_versions(ps);
    bump_versions(exp_avgs);
    bump_versions(exp_avg_sqs);
    bump_versions(max_exp_avg_sqs);
  }
}

}  // namespace

void adam_group_step(std::vector<Tensor>& params,
                     ParamStateMap& state,
                     const std::function<std::unique_ptr<AdamParamState>()>& make_state, double lr,
                     const std::tuple<double, double>& betas, double eps, bool amsgrad, double decoupled_decay,
                     double l2) {
  std::vector<Tensor> on_cuda;
  std::vector<AdamParamState*> cuda_states;
  for (Tensor& p : params) {
    if (!p.grad().defined()) continue;
    auto& st = state[p.unsafeGetTensorImpl()];
    if (!st) st = make_state();
    auto& s = static_cast<AdamParamState&>(*st);
    if (adam_cuda_fusable(p, s, amsgrad)) {
      on_cuda.push_back(p);
      cuda_states.push_back(&s);
    } else {
      adam_step(p, p.grad(), s, lr, betas, eps, amsgrad, decoupled_decay, l2);
    }
  }
  if (!on_cuda.empty()) adam_step_cuda(on_cuda, cuda_states, lr, betas, eps, amsgrad, decoupled_decay, l2);
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
    // L2 decay: weight_decay * p added to the gradient.
    detail::adam_group_step(
        group.params(), state_, [] { return std::make_unique<AdamParamState>(); }, o.lr(), o.betas(), o.eps(),
        o.amsgrad(), 0.0, o.weight_decay());
  }
  return loss;
}

}  // namespace ember::optim
