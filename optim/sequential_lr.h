// SequentialLR: runs one scheduler after another, switching at milestone epochs, as
// torch.optim.lr_scheduler.SequentialLR.
#pragma once

#include <memory>
#include <vector>

#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

class SequentialLR : public LRScheduler {
 public:
  /// `schedulers` all drive `optimizer`; milestones.size() == schedulers.size() - 1.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);

  using LRScheduler::step;
  void step() override;

  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }

  /// Its own counters plus each scheduler's state under "_schedulers.<i>.".
  OrderedDict<std::string, Tensor> state_dict() const override;
  void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict) override;

 protected:
  std::vector<double> get_lrs() override { return get_current_lrs(); }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace ember::optim
