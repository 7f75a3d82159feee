// Learning-rate schedulers: the LRScheduler base (libtorch's torch::optim::LRScheduler) and
// the epoch-indexed schedules of torch.optim.lr_scheduler, each producing PyTorch's exact lr
// sequence (the same recursive "chainable" formulas PyTorch's get_lr uses).
// OneCycleLR, SequentialLR and ReduceLROnPlateau live in their own headers beside this one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ember/core/ordered_dict.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

// Note [Scheduler semantics]
// As PyTorch (not libtorch 1.x): constructing a scheduler performs its first step, so after
// construction last_epoch() == 0 and the optimizer holds the schedule's epoch-0 lr (LinearLR's
// start_factor * lr, OneCycleLR's max_lr / div_factor, ...). Call step() after each
// optimizer.step(). The base lrs are each group's initial_lr, which the first scheduler
// attached to an optimizer records (PyTorch's group.setdefault("initial_lr", lr)).
// State dicts are OrderedDict<std::string, Tensor> of 0-dim tensors: "last_epoch" and
// "_step_count" (int64), "base_lrs.<i>" and "_last_lr.<i>" (float64), plus each scheduler's
// own counters; hyper-parameters come from the constructor. load_state_dict on a scheduler
// built the same way continues the schedule exactly (load the optimizer's state as well).

class SequentialLR;

class LRScheduler {
 public:
  /// Keeps a reference: the optimizer must outlive the scheduler.
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances one epoch and sets every group's lr.
  virtual void step();
  /// Jumps to `epoch`, using the closed form where the schedule has one (PyTorch's
  /// deprecated step(epoch); SequentialLR restarts schedules with it).
  virtual void step(double epoch);

  /// The lrs the last step set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  Optimizer& optimizer() const { return optimizer_; }

  virtual OrderedDict<std::string, Tensor> state_dict() const;
  virtual void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict);

 protected:
  /// The lrs for the new last_epoch_ (PyTorch's get_lr; libtorch's get_lrs).
  virtual std::vector<double> get_lrs() = 0;
  /// The lrs for last_epoch_ computed directly from the base lrs; defaults to get_lrs().
  virtual std::vector<double> closed_form_lrs() { return get_lrs(); }
  /// The optimizer's current lr of each group.
  std::vector<double> get_current_lrs() const;
  void set_optimizer_lrs(const std::vector<double>& lrs);
  /// PyTorch's _initial_step: every concrete scheduler's constructor ends with it.
  void initial_step();

  Optimizer& optimizer_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;

  friend class SequentialLR;
};

/// lr = base_lr * lr_lambda(epoch), one function for all groups or one per group.
class LambdaLR : public LRScheduler {
 public:
  using LambdaFn = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, LambdaFn lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<LambdaFn> lr_lambdas);

 protected:
  std::vector<double> get_lrs() override;

 private:
  std::vector<LambdaFn> lr_lambdas_;
};

/// Multiplies the lr by gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// Multiplies the lr by gamma at each milestone epoch (a repeated milestone counts twice).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, const std::vector<int64_t>& milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;

 private:
  std::map<int64_t, int64_t> milestones_;  // epoch -> how often it was given
  double gamma_;
};

/// Multiplies the lr by gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;

 private:
  double gamma_;
};

/// Scales the lr linearly from start_factor to end_factor over total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

/// Half a cosine from the base lr down to eta_min over T_max epochs (and back up after).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

/// SGDR: cosine annealing restarted after T_0 epochs, each period T_mult times longer.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0.0);

  void step() override;
  /// Fractional epochs are allowed (`step(epoch + i / iters_per_epoch)`).
  void step(double epoch) override;
  double T_cur() const { return T_cur_; }

  OrderedDict<std::string, Tensor> state_dict() const override;
  void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict) override;

 protected:
  std::vector<double> get_lrs() override;

 private:
  void apply(double epoch);
  int64_t T_0_, T_i_, T_mult_;
  double eta_min_;
  double T_cur_;
};

}  // namespace ember::optim
