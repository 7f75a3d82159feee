// Adagrad (torch::optim::Adagrad): per-element learning rates from the running sum of squared
// gradients, with lr decay, updating exactly as PyTorch's single-tensor (dense) Adagrad.
#pragma once

#include "ember/core/arg.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  /* implicit */ AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  EMBER_ARG(double, lr) = 1e-2;
  EMBER_ARG(double, lr_decay) = 0;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, initial_accumulator_value) = 0;
  EMBER_ARG(double, eps) = 1e-10;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> named_values() const override;
  void set_named_value(const std::string& name, double value) override;
  friend bool operator==(const AdagradOptions& a, const AdagradOptions& b);
};

struct AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
  EMBER_ARG(Tensor, sum);
  EMBER_ARG(int64_t, step) = 0;

 public:
  std::vector<std::pair<std::string, Tensor>> named_tensors() const override;
  void set_named_tensor(const std::string& name, const Tensor& value) override;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdagradParamState>();
  }
};

}  // namespace ember::optim
