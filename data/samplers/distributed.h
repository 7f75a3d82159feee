// DistributedSampler: the part of a dataset one rank of a data-parallel job reads each epoch
// (torch.utils.data.distributed.DistributedSampler). Every rank draws the same permutation
// (keyed by seed + epoch), pads it by repeating its start up to a multiple of num_replicas
// (or truncates it with drop_last), and keeps every num_replicas-th index from its rank on,
// so the ranks' parts are disjoint and equally long. The permutation comes from ember's
// Philox stream, so the order differs from PyTorch's for the same seed; the structure does not.
//
// This data-layer class needs num_replicas and rank (libtorch's C++ samplers default them to
// 1 and 0); ember::dist::distributed_sampler() (dist/distributed_sampler.h) takes them from
// the default process group, as PyTorch's constructor does when they are not given.
//
// DistributedRandomSampler and DistributedSequentialSampler are libtorch's C++ pair: each rank
// reads ceil(size / num_replicas) examples (size / num_replicas without allow_duplicates), the
// index list padded by wrapping around; the random one shuffles the whole padded list with
// std::mt19937(epoch) and std::shuffle, as libtorch does, so with the same standard library
// the orders are libtorch's. libtorch's template base DistributedSampler<> is not spelled
// here: ember's DistributedSampler is PyTorch's Python class above (docs/libtorch_names.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/data/samplers/base.h"

namespace ember::data::samplers {

class DistributedSampler : public Sampler<> {
 public:
  /// A sampler over a dataset of `size` examples for `rank` of `num_replicas` ranks.
  /// Raises "Invalid rank 3, rank should be in the interval [0, 1]" for a rank outside the job.
  explicit DistributedSampler(size_t size, int64_t num_replicas = 1, int64_t rank = 0, bool shuffle = true,
                              uint64_t seed = 0, bool drop_last = false);

  /// Starts a pass over this rank's indices of epoch `epoch()` (new_size: the dataset's new size).
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  /// The epoch the next pass draws; as in PyTorch, reset() does not advance it (the DataLoader
  /// calls set_epoch at every epoch; without one, call it yourself or every epoch is the same).
  void set_epoch(uint64_t epoch) override { epoch_ = epoch; }

  uint64_t epoch() const noexcept { return epoch_; }
  int64_t num_replicas() const noexcept { return num_replicas_; }
  int64_t rank() const noexcept { return rank_; }
  /// This rank's number of indices per pass (len(sampler) in PyTorch).
  size_t num_samples() const noexcept { return num_samples_; }
  /// num_samples() * num_replicas(): the padded or truncated length every rank indexes into.
  size_t total_size() const noexcept { return num_samples_ * static_cast<size_t>(num_replicas_); }
  /// This pass's indices (all of them, whatever next() has returned so far).
  const std::vector<size_t>& indices() const noexcept { return indices_; }

 private:
  void compute_num_samples();

  size_t size_;
  int64_t num_replicas_;
  int64_t rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  uint64_t epoch_ = 0;
  size_t num_samples_ = 0;
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

/// libtorch's DistributedRandomSampler: this rank's slice of the epoch's shuffled indices.
class DistributedRandomSampler : public Sampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  /// Chooses the shuffle of the next reset() (libtorch's set_epoch; call it every epoch).
  void set_epoch(uint64_t epoch) override { epoch_ = epoch; }
  size_t epoch() const noexcept { return static_cast<size_t>(epoch_); }
  /// The position in the whole (all ranks') index list.
  size_t index() const noexcept { return sample_index_; }

 private:
  size_t local_sample_count() const;
  void populate_indices();

  size_t size_, num_replicas_, rank_;
  uint64_t epoch_ = 0;
  bool allow_duplicates_;
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

/// libtorch's DistributedSequentialSampler: this rank's contiguous block of indices, in order.
class DistributedSequentialSampler : public Sampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                               bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  void set_epoch(uint64_t epoch) override { epoch_ = epoch; }
  size_t epoch() const noexcept { return static_cast<size_t>(epoch_); }
  size_t index() const noexcept { return sample_index_; }

 private:
  size_t local_sample_count() const;
  void populate_indices();

  size_t size_, num_replicas_, rank_;
  uint64_t epoch_ = 0;
  bool allow_duplicates_;
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

}  // namespace ember::data::samplers
