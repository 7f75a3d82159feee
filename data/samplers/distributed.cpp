// DistributedSampler's pass: permutation of (seed + epoch), padding or truncation to
// total_size, then this rank's stride through it (PyTorch's DistributedSampler.__iter__).
#include "ember/data/samplers/distributed.h"

#include <numeric>

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

}  // namespace ember::data::samplers
