// OneCycleLR: phases and annealing exactly as PyTorch 1.13's OneCycleLR.get_lr.
#include "ember/optim/one_cycle_lr.h"

#include <cmath>
#include <numbers>

#include "ember/optim/adam.h"
#include "ember/optim/adamw.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sgd.h"

namespace ember::optim {

namespace detail {
bool has_momentum(const OptimizerOptions& o) {
  return dynamic_cast<const SGDOptions*>(&o) || dynamic_cast<const RMSpropOptions*>(&o) ||
         dynamic_cast<const AdamOptions*>(&o) || dynamic_cast<const AdamWOptions*>(&o);
}
void set_momentum(OptimizerOptions& o, double m) {
  if (auto* sgd = dynamic_cast<SGDOptions*>(&o))
    sgd->momentum(m);
  else if (auto* rms = dynamic_cast<RMSpropOptions*>(&o))
    rms->momentum(m);
  else if (auto* adam = dynamic_cast<AdamOptions*>(&o))
    std::get<0>(adam->betas()) = m;
  else if (auto* adamw = dynamic_cast<AdamWOptions*>(&o))
    std::get<0>(adamw->betas()) = m;
}
}  // namespace detail

namespace {
std::vector<double> per_group(Optimizer& optimizer, std::vector<double> v) {
  const size_t n = optimizer.param_groups().size();
  if (v.size() == 1) v.assign(n, v[0]);
  EMBER_CHECK(v.size() == n, "expected ", n, " values for max_lr, got ", v.size());
  return v;
}
}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start,
                       const std::string& anneal_strategy, bool cycle_momentum, double base_momentum,
                       double max_momentum, double div_factor, double final_div_factor, bool three_phase)
    : OneCycleLR(optimizer, std::vector<double>{max_lr}, total_steps, pct_start, anneal_strategy,
                 cycle_momentum, base_momentum, max_momentum, div_factor, final_div_factor, three_phase) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, std::vector<double> max_lr, int64_t total_steps,
                       double pct_start, const std::string& anneal_strategy, bool cycle_momentum,
                       double base_momentum, double max_momentum, double div_factor, double final_div_factor,
                       bool three_phase)
    : LRScheduler(optimizer), total_steps_(total_steps), cycle_momentum_(cycle_momentum) {
  EMBER_CHECK(total_steps > 0, "Expected positive integer total_steps, but got ", total_steps);
  EMBER_CHECK(pct_start >= 0 && pct_start <= 1, "Expected float between 0 and 1 pct_start, but got ",
              pct_start);
  EMBER_CHECK(anneal_strategy == "cos" || anneal_strategy == "linear",
              "anneal_strategy must by one of 'cos' or 'linear', instead got ", anneal_strategy);
  linear_ = anneal_strategy == "linear";
  const double n = static_cast<double>(total_steps);
  const double last = n - 1;
  using P = Point;
  if (three_phase) {
    phases_ = {{pct_start * n - 1, P::kInitial, P::kMax, P::kMaxMomentum, P::kBaseMomentum},
               {2 * pct_start * n - 2, P::kMax, P::kInitial, P::kBaseMomentum, P::kMaxMomentum},
               {last, P::kInitial, P::kMin, P::kMaxMomentum, P::kMaxMomentum}};
  } else {
    phases_ = {{pct_start * n - 1, P::kInitial, P::kMax, P::kMaxMomentum, P::kBaseMomentum},
               {last, P::kMax, P::kMin, P::kBaseMomentum, P::kMaxMomentum}};
  }

  max_lr = per_group(optimizer, std::move(max_lr));
  auto& groups = optimizer.param_groups();
  if (cycle_momentum) {
    for (const OptimizerParamGroup& g : groups)
      EMBER_CHECK(detail::has_momentum(g.options()),
                  "optimizer must support momentum with `cycle_momentum` option enabled");
  }
  // The schedule starts from max_lr / div_factor, which becomes the groups' initial_lr.
  base_lrs_.clear();
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupValues v{max_lr[i] / div_factor, max_lr[i], max_lr[i] / div_factor / final_div_factor, base_momentum,
                  max_momentum};
    groups[i].set_initial_lr(v.initial_lr);
    base_lrs_.push_back(v.initial_lr);
    if (cycle_momentum) detail::set_momentum(groups[i].options(), max_momentum);
    groups_.push_back(v);
  }
  initial_step();
}

double OneCycleLR::GroupValues::at(Point p) const {
  switch (p) {
    case Point::kInitial:
      return initial_lr;
    case Point::kMax:
      return max_lr;
    case Point::kMin:
      return min_lr;
    case Point::kBaseMomentum:
      return base_momentum;
    case Point::kMaxMomentum:
      return max_momentum;
  }
  return 0.0;
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (linear_) return (end - start) * pct + start;
  const double cos_out = std::cos(std::numbers::pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

std::vector<double> OneCycleLR::get_lrs() {
  const int64_t step_num = last_epoch_;
  EMBER_CHECK(step_num <= total_steps_, "Tried to step ", step_num + 1,
              " times. The specified number of total steps is ", total_steps_);
  std::vector<double> lrs;
  auto& groups = optimizer_.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (static_cast<double>(step_num) <= phase.end_step || i + 1 == phases_.size()) {
        const double pct = (static_cast<double>(step_num) - start_step) / (phase.end_step - start_step);
        lr = anneal(groups_[g].at(phase.start_lr), groups_[g].at(phase.end_lr), pct);
        momentum = anneal(groups_[g].at(phase.start_momentum), groups_[g].at(phase.end_momentum), pct);
        break;
      }
      start_step = phase.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) detail::set_momentum(groups[g].options(), momentum);
  }
  return lrs;
}

}  // namespace ember::optim
