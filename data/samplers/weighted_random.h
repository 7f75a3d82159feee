// WeightedRandomSampler: num_samples indices drawn with probability proportional to their
// weight, with or without replacement (PyTorch's WeightedRandomSampler), reseeded per epoch
// like RandomSampler.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/data/samplers/base.h"

namespace ember::data::samplers {

class WeightedRandomSampler : public Sampler<> {
 public:
  WeightedRandomSampler(std::vector<double> weights, size_t num_samples, bool replacement = true,
                        std::optional<uint64_t> seed = std::nullopt);
  /// Weights from a 1-d tensor of any real dtype.
  WeightedRandomSampler(const Tensor& weights, size_t num_samples, bool replacement = true,
                        std::optional<uint64_t> seed = std::nullopt);
  /// new_size is ignored: num_samples defines the pass.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  void set_epoch(uint64_t epoch) override { next_epoch_ = epoch; }
  uint64_t epoch() const noexcept { return next_epoch_; }

 private:
  std::vector<double> weights_;
  size_t num_samples_;
  bool replacement_;
  uint64_t seed_;
  uint64_t next_epoch_ = 0;
  std::vector<size_t> drawn_;
  size_t index_ = 0;
};

}  // namespace ember::data::samplers
