// Adam (torch::optim::Adam): moment estimates with bias correction, optional AMSGrad and
// L2 weight decay added to the gradient, updating exactly as PyTorch's single-tensor Adam.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ember/core/arg.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  using betas_t = std::tuple<double, double>;
  /* implicit */ AdamOptions(double lr = 1e-3) : lr_(lr) {}
  EMBER_ARG(double, lr) = 1e-3;
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, amsgrad) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> named_values() const override;
  void set_named_value(const std::string& name, double value) override;
  friend bool operator==(const AdamOptions& a, const AdamOptions& b);
};

struct AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(Tensor, exp_avg);
  EMBER_ARG(Tensor, exp_avg_sq);
  EMBER_ARG(Tensor, max_exp_avg_sq) = {};

 public:
  std::vector<std::pair<std::string, Tensor>> named_tensors() const override;
  void set_named_tensor(const std::string& name, const Tensor& value) override;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  Adam(std::vector<Tensor> params, AdamOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdamParamState>();
  }
};

namespace detail {
/// Adam's options as named values (shared with AdamW, whose options are the same).
std::vector<std::pair<std::string, double>> adam_named_values(double lr,
                                                              const std::tuple<double, double>& betas,
                                                              double eps, double weight_decay, bool amsgrad);
/// Sets one named value of Adam's or AdamW's options (their fields are the same); an unknown
/// name is an error naming the optimizer.
template <class Options>
void set_adam_named_value(Options& o, const std::string& name, double v, const char* optimizer) {
  if (name == "lr") o.lr(v);
  else if (name == "betas.0") std::get<0>(o.betas()) = v;
  else if (name == "betas.1") std::get<1>(o.betas()) = v;
  else if (name == "eps") o.eps(v);
  else if (name == "weight_decay") o.weight_decay(v);
  else if (name == "amsgrad") o.amsgrad(v != 0);
  else EMBER_CHECK(false, optimizer, " has no option named '", name, "'");
}
template <class Options>
bool adam_options_equal(const Options& a, const Options& b) {
  return a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() && a.weight_decay() == b.weight_decay() &&
         a.amsgrad() == b.amsgrad();
}
/// Checks options with PyTorch's messages ("Invalid learning rate: -1").
void check_adam_options(double lr, const std::tuple<double, double>& betas, double eps, double weight_decay);
/// Adam's step for one parameter once weight decay is applied: counts the step, updates the
/// moments and the parameter. `state` is created on first use.
void adam_update(Tensor& param, const Tensor& grad, AdamParamState& state, double lr,
                 const std::tuple<double, double>& betas, double eps, bool amsgrad);
/// A whole step for one parameter: AdamW's decoupled decay (param *= 1 - lr decoupled_decay,
/// when decoupled_decay != 0) or Adam's L2 term (grad + l2 param, when l2 != 0), then
/// adam_update. Dense float32/float64 CPU tensors take one fused pass with the same operations
/// in the same order (adam_step_reference); anything else runs the tensor ops.
void adam_step(Tensor& param, const Tensor& grad, AdamParamState& state, double lr,
               const std::tuple<double, double>& betas, double eps, bool amsgrad, double decoupled_decay,
               double l2);
/// adam_step through the tensor ops only (the oracle of the fused pass's tests).
void adam_step_reference(Tensor& param, const Tensor& grad, AdamParamState& state, double lr,
                         const std::tuple<double, double>& betas, double eps, bool amsgrad,
                         double decoupled_decay, double l2);
/// One Adam (l2) or AdamW (decoupled_decay) step over a parameter group: parameters
/// without a gradient are skipped; CUDA parameters that qualify (optim/fused_step.h) go
/// through the fused multi-tensor kernels (cuda/optim.h), a device and dtype at a time, the
/// others through adam_step. `make_state` creates a parameter's state on its first step.
void adam_group_step(std::vector<Tensor>& params,
                     ParamStateMap& state,
                     const std::function<std::unique_ptr<AdamParamState>()>& make_state, double lr,
                     const std::tuple<double, double>& betas, double eps, bool amsgrad, double decoupled_decay,
                     double l2);
}  // namespace detail

}  // namespace ember::optim
