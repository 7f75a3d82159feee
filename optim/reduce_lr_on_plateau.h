// ReduceLROnPlateau: cuts the lr by `factor` once a watched metric stops improving for
// `patience` epochs, as torch.optim.lr_scheduler.ReduceLROnPlateau (libtorch's
// ReduceLROnPlateauScheduler, with the same constructor). Not an LRScheduler: it steps on a metric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/ordered_dict.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

class ReduceLROnPlateau {
 public:
  /// min: lower metric is better (a loss); max: higher is better (an accuracy).
  enum SchedulerMode { min, max };
  /// rel: improvement means beating best * (1 -/+ threshold); abs: best -/+ threshold.
  enum ThresholdMode { rel, abs };

  /// min_lr: empty (0 for all groups), one value for all groups, or one per group.
  explicit ReduceLROnPlateau(Optimizer& optimizer, SchedulerMode mode = min, double factor = 0.1,
                             int64_t patience = 10, double threshold = 1e-4,
                             ThresholdMode threshold_mode = rel, int64_t cooldown = 0,
                             const std::vector<double>& min_lr = {}, double eps = 1e-8, bool verbose = false);

  /// Records one epoch's metric and reduces the lrs if it has plateaued.
  void step(double metric);

  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }
  bool is_better(double a, double best) const;

  /// "last_epoch", "best", "num_bad_epochs", "cooldown_counter", "_last_lr.<i>" (0-dim tensors).
  OrderedDict<std::string, Tensor> state_dict() const;
  void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict);

 private:
  void reduce_lr(int64_t epoch);

  Optimizer& optimizer_;
  SchedulerMode mode_;
  double factor_;
  int64_t patience_;
  double threshold_;
  ThresholdMode threshold_mode_;
  int64_t cooldown_;
  std::vector<double> min_lrs_;
  double eps_;
  bool verbose_;

  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

/// libtorch's name for the same class.
using ReduceLROnPlateauScheduler = ReduceLROnPlateau;

}  // namespace ember::optim
