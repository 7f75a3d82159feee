// ReduceLROnPlateau: PyTorch 1.13's step / is_better / _reduce_lr, decision for decision.
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/dict_int.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace ember::optim {

namespace {
constexpr const char* kWhat = "ReduceLROnPlateau state dict";
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, SchedulerMode mode, double factor,
                                     int64_t patience, double threshold, ThresholdMode threshold_mode,
                                     int64_t cooldown, const std::vector<double>& min_lr, double eps,
                                     bool verbose)
    : optimizer_(optimizer),
      mode_(mode),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_mode_(threshold_mode),
      cooldown_(cooldown),
      eps_(eps),
      verbose_(verbose) {
  EMBER_CHECK(factor < 1.0, "Factor should be < 1.0.");
  const size_t n = optimizer.param_groups().size();
  if (min_lr.empty())
    min_lrs_.assign(n, 0.0);
  else if (min_lr.size() == 1)
    min_lrs_.assign(n, min_lr[0]);
  else {
    EMBER_CHECK(min_lr.size() == n, "expected ", n, " min_lrs, got ", min_lr.size());
    min_lrs_ = min_lr;
  }
  // The worst possible value, so the first metric is always an improvement.
  best_ = mode == min ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  for (const OptimizerParamGroup& g : optimizer.param_groups()) last_lr_.push_back(g.options().get_lr());
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  if (mode_ == min && threshold_mode_ == rel) return a < best * (1.0 - threshold_);
  if (mode_ == min && threshold_mode_ == abs) return a < best - threshold_;
  if (mode_ == max && threshold_mode_ == rel) return a > best * (threshold_ + 1.0);
  return a > best + threshold_;
}

void ReduceLROnPlateau::step(double metric) {
  const int64_t epoch = last_epoch_ + 1;
  last_epoch_ = epoch;
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // epochs in cooldown do not count as bad
  }
  if (num_bad_epochs_ > patience_) {
    reduce_lr(epoch);
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const OptimizerParamGroup& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

void ReduceLROnPlateau::reduce_lr(int64_t epoch) {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double old_lr = groups[i].options().get_lr();
    const double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
    // Changes smaller than eps are ignored (the lr has reached min_lr).
    if (old_lr - new_lr > eps_) {
      groups[i].options().set_lr(new_lr);
      if (verbose_)
        std::printf("Epoch %05lld: reducing learning rate of group %zu to %.4e.\n",
                    static_cast<long long>(epoch), i, new_lr);
    }
  }
}

OrderedDict<std::string, Tensor> ReduceLROnPlateau::state_dict() const {
  OrderedDict<std::string, Tensor> d;
  d.insert("last_epoch", detail::dict_scalar(static_cast<double>(last_epoch_), true));
  d.insert("best", detail::dict_scalar(best_));
  d.insert("num_bad_epochs", detail::dict_scalar(static_cast<double>(num_bad_epochs_), true));
  d.insert("cooldown_counter", detail::dict_scalar(static_cast<double>(cooldown_counter_), true));
  for (size_t i = 0; i < last_lr_.size(); ++i)
    d.insert("_last_lr." + std::to_string(i), detail::dict_scalar(last_lr_[i]));
  return d;
}

void ReduceLROnPlateau::load_state_dict(const OrderedDict<std::string, Tensor>& d) {
  const int64_t last_epoch = detail::dict_int(d, "last_epoch", kWhat);
  const double best = detail::dict_value(d, "best", kWhat);
  const int64_t bad = detail::dict_int(d, "num_bad_epochs", kWhat);
  const int64_t cooldown = detail::dict_int(d, "cooldown_counter", kWhat);
  std::vector<double> last_lr;
  for (size_t i = 0; i < optimizer_.param_groups().size(); ++i)
    last_lr.push_back(detail::dict_value(d, "_last_lr." + std::to_string(i), kWhat));
  last_epoch_ = last_epoch;
  best_ = best;
  num_bad_epochs_ = bad;
  cooldown_counter_ = cooldown;
  last_lr_ = std::move(last_lr);
}

}  // namespace ember::optim
