// RandomSampler and SubsetRandomSampler: a fresh permutation per pass, drawn from a Philox
// stream keyed by (seed, epoch) so every epoch differs and any epoch can be reproduced.
// reset() draws the permutation of epoch `epoch()` and advances it; set_epoch(e) picks the
// epoch the next reset() draws (the DataLoader calls it at the start of every epoch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/samplers/base.h"

namespace ember::data::samplers {

class RandomSampler : public Sampler<> {
 public:
  /// A sampler over 0..size-1; without a seed, one is drawn from ember's default generator
  /// (so manual_seed makes it reproducible).
  explicit RandomSampler(int64_t size, std::optional<uint64_t> seed = std::nullopt);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  void set_epoch(uint64_t epoch) override { next_epoch_ = epoch; }
  /// The epoch the next reset() will draw.
  uint64_t epoch() const noexcept { return next_epoch_; }
  uint64_t seed() const noexcept { return seed_; }
  size_t index() const noexcept { return index_; }

 private:
  uint64_t seed_;
  uint64_t next_epoch_ = 0;
  size_t size_;
  std::vector<size_t> perm_;
  size_t index_ = 0;
};

/// The given indices in a fresh random order every pass (PyTorch's SubsetRandomSampler).
class SubsetRandomSampler : public Sampler<> {
 public:
  explicit SubsetRandomSampler(std::vector<size_t> indices, std::optional<uint64_t> seed = std::nullopt);
  /// new_size is ignored: the subset defines the pass.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  void set_epoch(uint64_t epoch) override { next_epoch_ = epoch; }
  uint64_t epoch() const noexcept { return next_epoch_; }

 private:
  std::vector<size_t> indices_;
  uint64_t seed_;
  uint64_t next_epoch_ = 0;
  std::vector<size_t> order_;
  size_t index_ = 0;
};

namespace detail {
/// Up to batch_size entries of `order` from `index` on (advancing it); nullopt at the end.
std::optional<std::vector<size_t>> take(const std::vector<size_t>& order, size_t& index, size_t batch_size);
/// A sampler's count or position in an archive: a 0-dim int64 tensor (as libtorch's samplers).
void write_count(serialize::OutputArchive& archive, const std::string& key, uint64_t value);
uint64_t read_count(serialize::InputArchive& archive, const std::string& key);
/// A pass's index order in an archive: a 1-d int64 tensor.
void write_indices(serialize::OutputArchive& archive, const std::string& key, const std::vector<size_t>& indices);
std::vector<size_t> read_indices(serialize::InputArchive& archive, const std::string& key);
}  // namespace detail

}  // namespace ember::data::samplers
