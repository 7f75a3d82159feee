// BatchSampler: groups another sampler's indices into batches of batch_size, optionally
// dropping a short last batch (PyTorch's BatchSampler). Its next() ignores the requested size.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "ember/data/samplers/base.h"

namespace ember::data::samplers {

class BatchSampler : public Sampler<> {
 public:
  BatchSampler(std::shared_ptr<Sampler<>> sampler, size_t batch_size, bool drop_last);
  template <class S>
  requires std::is_base_of_v<Sampler<>, S> BatchSampler(S sampler, size_t batch_size, bool drop_last)
      : BatchSampler(std::make_shared<S>(std::move(sampler)), batch_size, drop_last) {}

  void reset(std::optional<size_t> new_size = std::nullopt) override { sampler_->reset(new_size); }
  /// The next batch of batch_size indices (the argument is ignored).
  std::optional<std::vector<size_t>> next(size_t ignored = 0) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  void set_epoch(uint64_t epoch) override { sampler_->set_epoch(epoch); }
  size_t batch_size() const noexcept { return batch_size_; }
  bool drop_last() const noexcept { return drop_last_; }

 private:
  std::shared_ptr<Sampler<>> sampler_;
  size_t batch_size_;
  bool drop_last_;
};

}  // namespace ember::data::samplers
