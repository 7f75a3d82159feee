// SequentialLR: PyTorch 1.13's constructor and step, including how it rewinds the schedulers
// it wraps (each already took its initial step when built).
#include "ember/optim/sequential_lr.h"

#include <algorithm>

namespace ember::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  EMBER_CHECK(!schedulers_.empty(), "SequentialLR expects at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    EMBER_CHECK(schedulers_[i] != nullptr, "SequentialLR got an empty scheduler at index ", i);
    EMBER_CHECK(
        &schedulers_[i]->optimizer_ == &optimizer,
        "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at "
        "index ",
        i, " to be different than the optimizer passed in.");
  }
  EMBER_CHECK(milestones_.size() == schedulers_.size() - 1,
              "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
              "milestone points, but got number of schedulers ",
              schedulers_.size(), " and the number of milestones to be equal to ", milestones_.size());
  // Undo the wrapped schedulers' initial steps and restart the first one from the initial lrs.
  last_epoch_ = 0;
  for (OptimizerParamGroup& group : optimizer.param_groups()) group.options().set_lr(group.initial_lr());
  for (auto& s : schedulers_) s->last_epoch_ -= 1;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const auto idx = static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                                       milestones_.begin());
  LRScheduler& scheduler = *schedulers_[idx];
  // At its milestone a scheduler restarts from epoch 0.
  if (idx > 0 && milestones_[idx - 1] == last_epoch_)
    scheduler.step(0.0);
  else
    scheduler.step();
  last_lr_ = scheduler.get_last_lr();
}

OrderedDict<std::string, Tensor> SequentialLR::state_dict() const {
  OrderedDict<std::string, Tensor> d = LRScheduler::state_dict();
  for (size_t i = 0; i < schedulers_.size(); ++i)
    for (const auto& item : schedulers_[i]->state_dict())
      d.insert("_schedulers." + std::to_string(i) + "." + item.key(), item.value());
  return d;
}

void SequentialLR::load_state_dict(const OrderedDict<std::string, Tensor>& d) {
  std::vector<OrderedDict<std::string, Tensor>> parts(schedulers_.size());
  for (const auto& item : d) {
    const std::string& key = item.key();
    if (key.rfind("_schedulers.", 0) != 0) continue;
    const size_t dot = key.find('.', 12);
    const std::string digits = dot == std::string::npos ? "" : key.substr(12, dot - 12);
    EMBER_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos,
                "malformed scheduler state dict key '", key, "'");
    const size_t i = std::stoul(digits);
    EMBER_CHECK(i < parts.size(), "scheduler state dict has state for scheduler ", i,
                " but SequentialLR has ", parts.size());
    parts[i].insert(key.substr(dot + 1), item.value());
  }
  LRScheduler::load_state_dict(d);
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(parts[i]);
}

}  // namespace ember::optim
