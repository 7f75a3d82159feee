// AdamW (torch::optim::AdamW): Adam with decoupled weight decay, the parameter shrinking by
// lr * weight_decay before the Adam step, exactly as PyTorch's single-tensor AdamW.
#pragma once

#include <tuple>

#include "ember/core/arg.h"
#include "ember/optim/adam.h"

namespace ember::optim {

struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  using betas_t = std::tuple<double, double>;
  /* implicit */ AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  EMBER_ARG(double, lr) = 1e-3;
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 1e-2;
  EMBER_ARG(bool, amsgrad) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> named_values() const override;
  void set_named_value(const std::string& name, double value) override;
  friend bool operator==(const AdamWOptions& a, const AdamWOptions& b);
};

/// AdamW keeps Adam's state (step, exp_avg, exp_avg_sq, max_exp_avg_sq).
struct AdamWParamState : public AdamParamState {
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<AdamWParamState>(*this);
  }
};

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdamWParamState>();
  }
};

}  // namespace ember::optim
