// DistributedSampler's pass: permutation of (seed + epoch), padding or truncation to
// total_size, then this rank's stride through it (PyTorch's DistributedSampler.__iter__).
#include "ember/data/samplers/distributed.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "ember/core/error.h"
#include "ember/data/random.h"
#include "ember/data/samplers/random.h"

namespace ember::data::samplers {

DistributedSampler::DistributedSampler(size_t size, int64_t num_replicas, int64_t rank, bool shuffle,
                                       uint64_t seed, bool drop_last)
    : size_(size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  EMBER_CHECK(num_replicas >= 1, "DistributedSampler: num_replicas must be positive, got ", num_replicas);
  EMBER_CHECK(rank >= 0 && rank < num_replicas, "Invalid rank ", rank,
              ", rank should be in the interval [0, ", num_replicas - 1, "]");
  compute_num_samples();
  reset(std::nullopt);
}

void DistributedSampler::compute_num_samples() {
  size_t n = size_, r = static_cast<size_t>(num_replicas_);
  // drop_last: the largest multiple of num_replicas that fits (ceil((n - r) / r) samples
  // each, as PyTorch computes it); otherwise pad up to the next multiple.
  if (drop_last_ && n % r != 0)
    num_samples_ = n < r ? 0 : (n - r + r - 1) / r;
  else
    num_samples_ = (n + r - 1) / r;
}

void DistributedSampler::reset(std::optional<size_t> new_size) {
  if (new_size && *new_size != size_) {
    size_ = *new_size;
    compute_num_samples();
  }
  std::vector<size_t> order;
  if (shuffle_) {
    // One stream per (seed + epoch): every rank draws the same permutation.
    order = ember::data::detail::permutation(size_, ember::data::detail::mix(seed_ + epoch_, 0x44495354ULL));
  } else {
    order.resize(size_);
    std::iota(order.begin(), order.end(), size_t{0});
  }
  const size_t total = total_size();
  if (order.size() < total) {       // pad by repeating from the start (cyclically if needed)
    const size_t n = order.size();  // > 0: an empty dataset has total_size 0
    for (size_t i = 0; order.size() < total; ++i) order.push_back(order[i % n]);
  } else {
    order.resize(total);  // drop_last: cut the tail
  }
  indices_.clear();
  indices_.reserve(num_samples_);
  for (size_t i = static_cast<size_t>(rank_); i < total; i += static_cast<size_t>(num_replicas_))
    indices_.push_back(order[i]);
  index_ = 0;
}

std::optional<std::vector<size_t>> DistributedSampler::next(size_t batch_size) {
  return detail::take(indices_, index_, batch_size);
}

void DistributedSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "index", index_);
  detail::write_indices(archive, "indices", indices_);
  detail::write_count(archive, "epoch", epoch_);
}

void DistributedSampler::load(serialize::InputArchive& archive) {
  std::vector<size_t> indices = detail::read_indices(archive, "indices");
  EMBER_CHECK(indices.size() == num_samples_, "DistributedSampler: the archive holds ", indices.size(),
              " indices, this rank reads ", num_samples_, " per pass");
  for (size_t i : indices)
    EMBER_CHECK(i < size_, "DistributedSampler: the archive's index ", i, " is out of range for ", size_, " examples");
  int64_t index = static_cast<int64_t>(detail::read_count(archive, "index"));
  EMBER_CHECK(static_cast<size_t>(index) <= indices.size(), "DistributedSampler: the archive's index ", index,
              " is past the end of its pass");
  indices_ = std::move(indices);
  index_ = static_cast<size_t>(index);
  epoch_ = detail::read_count(archive, "epoch");
}

// ---- libtorch's DistributedRandomSampler / DistributedSequentialSampler -----------------

namespace {
void check_replicas(size_t num_replicas, size_t rank, const char* sampler) {
  EMBER_CHECK(num_replicas >= 1, sampler, ": num_replicas must be positive, got ", num_replicas);
  EMBER_CHECK(rank < num_replicas, "Invalid rank ", rank, ", rank should be in the interval [0, ", num_replicas - 1,
              "]");
}

/// Examples per rank: ceil(size / replicas) with duplicates (padding), floor without.
size_t per_rank(size_t size, size_t num_replicas, bool allow_duplicates) {
  return allow_duplicates ? (size + num_replicas - 1) / num_replicas : size / num_replicas;
}

/// A restored sample index must lie in [begin, end].
size_t checked_sample_index(size_t index, size_t begin, size_t end, const char* sampler) {
  EMBER_CHECK(index >= begin && index <= end, sampler, ": the archive's sample index ", index,
              " is outside this rank's range [", begin, ", ", end, "]");
  return index;
}
}  // namespace

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
  check_replicas(num_replicas, rank, "DistributedRandomSampler");
  reset(size_);
}

size_t DistributedRandomSampler::local_sample_count() const {
  return per_rank(size_, num_replicas_, allow_duplicates_);
}

void DistributedRandomSampler::populate_indices() {
  const size_t local = local_sample_count();
  const size_t sample_count = num_replicas_ * local;
  all_indices_.resize(size_);
  std::iota(all_indices_.begin(), all_indices_.end(), size_t{0});
  for (size_t i = size_; i < sample_count; ++i) all_indices_.push_back(i % size_);  // pad by wrapping
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  populate_indices();
  std::mt19937 rand(static_cast<std::mt19937::result_type>(epoch_));
  std::shuffle(all_indices_.begin(), all_indices_.end(), rand);
  sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (sample_index_ >= end_index_ || batch_size == 0) return std::nullopt;
  size_t end = std::min(end_index_, sample_index_ + batch_size);
  std::vector<size_t> out(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                          all_indices_.begin() + static_cast<std::ptrdiff_t>(end));
  sample_index_ = end;
  return out;
}

// libtorch's keys ("sample_index_", "epoch_"); load reshuffles for the saved epoch.
void DistributedRandomSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "sample_index_", sample_index_);
  detail::write_count(archive, "epoch_", epoch_);
}

void DistributedRandomSampler::load(serialize::InputArchive& archive) {
  size_t index = detail::read_count(archive, "sample_index_");
  epoch_ = detail::read_count(archive, "epoch_");
  reset(std::nullopt);
  sample_index_ = checked_sample_index(index, begin_index_, end_index_, "DistributedRandomSampler");
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
  check_replicas(num_replicas, rank, "DistributedSequentialSampler");
  populate_indices();
}

size_t DistributedSequentialSampler::local_sample_count() const {
  return per_rank(size_, num_replicas_, allow_duplicates_);
}

void DistributedSequentialSampler::populate_indices() {
  const size_t local = local_sample_count();
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
  all_indices_.resize(local);
  for (size_t i = 0; i < local; ++i) all_indices_[i] = (begin_index_ + i) % size_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size && *new_size != size_) {
    size_ = *new_size;
    populate_indices();
  } else {
    sample_index_ = begin_index_;
  }
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ >= end_index_ || batch_size == 0) return std::nullopt;
  size_t end = std::min(end_index_, sample_index_ + batch_size);
  std::vector<size_t> out(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_ - begin_index_),
                          all_indices_.begin() + static_cast<std::ptrdiff_t>(end - begin_index_));
  sample_index_ = end;
  return out;
}

void DistributedSequentialSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "sample_index_", sample_index_);
}

void DistributedSequentialSampler::load(serialize::InputArchive& archive) {
  sample_index_ = checked_sample_index(detail::read_count(archive, "sample_index_"), begin_index_, end_index_,
                                       "DistributedSequentialSampler");
}

}  // namespace ember::data::samplers
