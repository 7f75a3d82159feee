// OneCycleLR: the 1cycle policy (lr warms up from max_lr / div_factor to max_lr, then anneals
// to a tiny min_lr) with momentum (SGD, RMSprop) or Adam's beta1 cycling inversely, as
// torch.optim.lr_scheduler.OneCycleLR.
#pragma once

#include <string>
#include <vector>

#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

class OneCycleLR : public LRScheduler {
 public:
  /// Python's argument order; `total_steps` is epochs * steps_per_epoch when counted that way.
  /// `anneal_strategy` is "cos" or "linear". max_lr may be given per group.
  OneCycleLR(Optimizer& optimizer, std::vector<double> max_lr, int64_t total_steps, double pct_start = 0.3,
             const std::string& anneal_strategy = "cos", bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95, double div_factor = 25.0,
             double final_div_factor = 1e4, bool three_phase = false);
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start = 0.3,
             const std::string& anneal_strategy = "cos", bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95, double div_factor = 25.0,
             double final_div_factor = 1e4, bool three_phase = false);

  int64_t total_steps() const { return total_steps_; }

 protected:
  std::vector<double> get_lrs() override;

 private:
  // Which per-group value a phase starts or ends at.
  enum class Point { kInitial, kMax, kMin, kBaseMomentum, kMaxMomentum };
  struct Phase {
    double end_step;
    Point start_lr, end_lr, start_momentum, end_momentum;
  };
  struct GroupValues {
    double initial_lr, max_lr, min_lr, base_momentum, max_momentum;
    double at(Point p) const;
  };
  double anneal(double start, double end, double pct) const;

  int64_t total_steps_;
  bool linear_;
  bool cycle_momentum_;
  std::vector<Phase> phases_;
  std::vector<GroupValues> groups_;
};

namespace detail {
/// Whether the group's optimizer keeps a momentum OneCycleLR can cycle (SGD, RMSprop: momentum;
/// Adam, AdamW: beta1), and reading / writing it.
bool has_momentum(const OptimizerOptions& options);
void set_momentum(OptimizerOptions& options, double momentum);
}  // namespace detail

}  // namespace ember::optim
