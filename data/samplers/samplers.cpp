// The samplers' passes: sequential order, seeded per-epoch permutations, weighted draws and
// batching. Random ones key a Philox stream by (seed, epoch) (data/random.h).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/data/random.h"
#include "ember/data/samplers/batch.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/stream.h"
#include "ember/data/samplers/weighted_random.h"

namespace ember::data::samplers {

namespace detail {
std::optional<std::vector<size_t>> take(const std::vector<size_t>& order, size_t& index, size_t batch_size) {
  if (index >= order.size() || batch_size == 0) return std::nullopt;
  size_t end = std::min(order.size(), index + batch_size);
  std::vector<size_t> out(order.begin() + static_cast<std::ptrdiff_t>(index),
                          order.begin() + static_cast<std::ptrdiff_t>(end));
  index = end;
  return out;
}

void write_count(serialize::OutputArchive& archive, const std::string& key, uint64_t value) {
  archive.write(key, static_cast<int64_t>(value));
}

uint64_t read_count(serialize::InputArchive& archive, const std::string& key) {
  int64_t v = 0;
  archive.read(key, v);
  return static_cast<uint64_t>(v);
}

void write_indices(serialize::OutputArchive& archive, const std::string& key, const std::vector<size_t>& indices) {
  std::vector<int64_t> v(indices.begin(), indices.end());
  archive.write(key, tensor(v, kInt64));
}

std::vector<size_t> read_indices(serialize::InputArchive& archive, const std::string& key) {
  Tensor t;
  archive.read(key, t);
  EMBER_CHECK(t.dim() == 1 && t.scalar_type() == kInt64, "sampler archive entry '", key,
              "' must be a 1-d int64 tensor, got ", t.scalar_type(), " with ", t.dim(), " dims");
  Tensor c = t.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  std::vector<size_t> out(static_cast<size_t>(c.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    EMBER_CHECK(p[i] >= 0, "sampler archive entry '", key, "' holds the negative index ", p[i]);
    out[i] = static_cast<size_t>(p[i]);
  }
  return out;
}

/// A restored position must lie within its pass.
static size_t checked_position(size_t index, size_t pass_size, const char* sampler) {
  EMBER_CHECK(index <= pass_size, sampler, ": the archive's index ", index, " is past the end of its pass (",
              pass_size, ")");
  return index;
}

/// A seeded sampler's pass in an archive: its position, its order, the seed and the epoch the
/// next reset() draws (so the passes after a restored one are the saved sampler's too).
struct SeededPass {
  size_t index;
  std::vector<size_t> order;
  uint64_t seed, epoch;
};

static void write_pass(serialize::OutputArchive& archive, const SeededPass& pass) {
  write_count(archive, "index", pass.index);
  write_indices(archive, "indices", pass.order);
  write_count(archive, "seed", pass.seed);
  write_count(archive, "epoch", pass.epoch);
}

static SeededPass read_pass(serialize::InputArchive& archive, const char* sampler) {
  SeededPass pass{0, read_indices(archive, "indices"), read_count(archive, "seed"), read_count(archive, "epoch")};
  pass.index = checked_position(read_count(archive, "index"), pass.order.size(), sampler);
  return pass;
}

uint64_t seed_or_default(std::optional<uint64_t> seed) {
  return seed ? *seed : ember::data::detail::seed_from_default_generator();
}
}  // namespace detail

// ---- SequentialSampler ------------------------------------------------------------------

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  if (index_ >= size_ || batch_size == 0) return std::nullopt;
  size_t end = std::min(size_, index_ + batch_size);
  std::vector<size_t> out(end - index_);
  std::iota(out.begin(), out.end(), index_);
  index_ = end;
  return out;
}

void SequentialSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "index", index_);
  detail::write_count(archive, "size", size_);
}

// A sampler loads only the state of a sampler over the same dataset: indices past its own size
// would reach a dataset that does not have them. A sampler over 0 examples (made only to be
// loaded, as libtorch users make ChunkDataset's chunk samplers) takes the archive's size.
void SequentialSampler::load(serialize::InputArchive& archive) {
  const uint64_t size = detail::read_count(archive, "size");
  EMBER_CHECK(size_ == 0 || size == size_, "SequentialSampler: the archive is of a sampler over ", size,
              " examples, this one is over ", size_);
  index_ = detail::checked_position(detail::read_count(archive, "index"), size, "SequentialSampler");
  size_ = size;
}

// ---- StreamSampler --------------------------------------------------------------------

void StreamSampler::reset(std::optional<size_t> new_size) {
  if (new_size) epoch_size_ = *new_size;
  examples_retrieved_so_far_ = 0;
}

std::optional<BatchSize> StreamSampler::next(size_t batch_size) {
  if (examples_retrieved_so_far_ >= epoch_size_ || batch_size == 0) return std::nullopt;
  size_t n = std::min(batch_size, epoch_size_ - examples_retrieved_so_far_);
  examples_retrieved_so_far_ += n;
  return BatchSize(n);
}

void StreamSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "examples_retrieved_so_far", examples_retrieved_so_far_);
  detail::write_count(archive, "epoch_size", epoch_size_);
}

void StreamSampler::load(serialize::InputArchive& archive) {
  epoch_size_ = detail::read_count(archive, "epoch_size");
  examples_retrieved_so_far_ = detail::checked_position(
      detail::read_count(archive, "examples_retrieved_so_far"), epoch_size_, "StreamSampler");
}

// ---- RandomSampler, SubsetRandomSampler ---------------------------------------------------

RandomSampler::RandomSampler(int64_t size, std::optional<uint64_t> seed)
    : seed_(detail::seed_or_default(seed)), size_(static_cast<size_t>(size)) {
  EMBER_CHECK(size >= 0, "RandomSampler: size must be non-negative, got ", size);
  reset(std::nullopt);
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  perm_ = ember::data::detail::permutation(size_, ember::data::detail::mix(seed_, next_epoch_++));
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return detail::take(perm_, index_, batch_size);
}

// seed and epoch too, so the passes after the restored one are the saved sampler's.
void RandomSampler::save(serialize::OutputArchive& archive) const {
  detail::write_pass(archive, {index_, perm_, seed_, next_epoch_});
}

void RandomSampler::load(serialize::InputArchive& archive) {
  detail::SeededPass pass = detail::read_pass(archive, "RandomSampler");
  EMBER_CHECK(size_ == 0 || pass.order.size() == size_, "RandomSampler: the archive is of a sampler over ",
              pass.order.size(), " examples, this one is over ", size_);
  for (size_t i : pass.order)
    EMBER_CHECK(i < pass.order.size(), "RandomSampler: the archive's index ", i, " is out of range for ",
                pass.order.size(), " examples");
  size_ = pass.order.size();
  perm_ = std::move(pass.order);
  index_ = pass.index;
  seed_ = pass.seed;
  next_epoch_ = pass.epoch;
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<size_t> indices, std::optional<uint64_t> seed)
    : indices_(std::move(indices)), seed_(detail::seed_or_default(seed)) {
  reset(std::nullopt);
}

void SubsetRandomSampler::reset(std::optional<size_t>) {
  std::vector<size_t> p =
      ember::data::detail::permutation(indices_.size(), ember::data::detail::mix(seed_, next_epoch_++));
  order_.resize(p.size());
  for (size_t i = 0; i < p.size(); ++i) order_[i] = indices_[p[i]];
  index_ = 0;
}

std::optional<std::vector<size_t>> SubsetRandomSampler::next(size_t batch_size) {
  return detail::take(order_, index_, batch_size);
}

void SubsetRandomSampler::save(serialize::OutputArchive& archive) const {
  detail::write_pass(archive, {index_, order_, seed_, next_epoch_});
}

void SubsetRandomSampler::load(serialize::InputArchive& archive) {
  detail::SeededPass pass = detail::read_pass(archive, "SubsetRandomSampler");
  std::vector<size_t> a = pass.order, b = indices_;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EMBER_CHECK(a == b, "SubsetRandomSampler: the archive holds a different subset");
  order_ = std::move(pass.order);
  index_ = pass.index;
  seed_ = pass.seed;
  next_epoch_ = pass.epoch;
}

// ---- WeightedRandomSampler --------------------------------------------------------------

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, size_t num_samples,
                                             bool replacement, std::optional<uint64_t> seed)
    : weights_(std::move(weights)),
      num_samples_(num_samples),
      replacement_(replacement),
      seed_(detail::seed_or_default(seed)) {
  // The checks and texts of PyTorch's WeightedRandomSampler and torch.multinomial.
  EMBER_CHECK(num_samples > 0,
              "num_samples should be a positive integer value, but got num_samples=", num_samples);
  EMBER_CHECK(!weights_.empty(), "WeightedRandomSampler: weights must not be empty");
  double sum = 0;
  size_t positive = 0;
  for (double w : weights_) {
    EMBER_CHECK(std::isfinite(w) && w >= 0,
                "invalid multinomial distribution (encountering probability entry < 0)");
    sum += w;
    positive += w > 0;
  }
  EMBER_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  if (!replacement) {
    EMBER_CHECK(num_samples <= weights_.size(),
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    EMBER_CHECK(num_samples <= positive,
                "invalid multinomial distribution (with replacement=False, not enough non-negative category "
                "to sample)");
  }
  reset(std::nullopt);
}

static std::vector<double> tensor_weights(const Tensor& w) {
  EMBER_CHECK(w.defined() && w.dim() == 1, "WeightedRandomSampler: weights must be a 1-d tensor");
  Tensor d = w.detach().to(kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

WeightedRandomSampler::WeightedRandomSampler(const Tensor& weights, size_t num_samples, bool replacement,
                                             std::optional<uint64_t> seed)
    : WeightedRandomSampler(tensor_weights(weights), num_samples, replacement, seed) {}

void WeightedRandomSampler::reset(std::optional<size_t>) {
  PhiloxStream rng(ember::data::detail::mix(seed_, next_epoch_++));
  drawn_.clear();
  drawn_.reserve(num_samples_);
  if (replacement_) {
    // Inverse CDF: the first index whose cumulative weight exceeds u * total.
    std::vector<double> cdf(weights_.size());
    std::partial_sum(weights_.begin(), weights_.end(), cdf.begin());
    double total = cdf.back();
    for (size_t k = 0; k < num_samples_; ++k) {
      double u = rng.uniform() * total;
      size_t i = static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      // cdf[i] > u >= cdf[i - 1] means weights_[i] > 0. Only rounding (u * total == total)
      // can run off the end; that draw belongs to the last positive weight.
      if (i >= weights_.size()) {
        i = weights_.size() - 1;
        while (weights_[i] == 0) --i;
      }
      drawn_.push_back(i);
    }
  } else {
    // Efraimidis-Spirakis: keep the num_samples largest keys log(u) / w; this has the law of
    // drawing one at a time proportional to weight without replacement (torch.multinomial).
    std::vector<std::pair<double, size_t>> keys;
    keys.reserve(weights_.size());
    for (size_t i = 0; i < weights_.size(); ++i) {
      double u = rng.uniform();
      if (weights_[i] > 0) keys.emplace_back(std::log(std::max(u, 1e-300)) / weights_[i], i);
    }
    std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(num_samples_), keys.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; k < num_samples_; ++k) drawn_.push_back(keys[k].second);
  }
  index_ = 0;
}

std::optional<std::vector<size_t>> WeightedRandomSampler::next(size_t batch_size) {
  return detail::take(drawn_, index_, batch_size);
}

void WeightedRandomSampler::save(serialize::OutputArchive& archive) const {
  detail::write_pass(archive, {index_, drawn_, seed_, next_epoch_});
}

void WeightedRandomSampler::load(serialize::InputArchive& archive) {
  detail::SeededPass pass = detail::read_pass(archive, "WeightedRandomSampler");
  EMBER_CHECK(pass.order.size() == num_samples_, "WeightedRandomSampler: the archive holds ", pass.order.size(),
              " draws, this sampler makes ", num_samples_);
  for (size_t i : pass.order)
    EMBER_CHECK(i < weights_.size(), "WeightedRandomSampler: the archive's index ", i, " is out of range");
  drawn_ = std::move(pass.order);
  index_ = pass.index;
  seed_ = pass.seed;
  next_epoch_ = pass.epoch;
}

// ---- BatchSampler -----------------------------------------------------------------------

BatchSampler::BatchSampler(std::shared_ptr<Sampler<>> sampler, size_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  EMBER_CHECK(sampler_ != nullptr, "BatchSampler: sampler must not be null");
  EMBER_CHECK(batch_size > 0,
              "batch_size should be a positive integer value, but got batch_size=", batch_size);
}

std::optional<std::vector<size_t>> BatchSampler::next(size_t) {
  std::vector<size_t> batch;
  batch.reserve(batch_size_);
  while (batch.size() < batch_size_) {
    auto more = sampler_->next(batch_size_ - batch.size());
    if (!more || more->empty()) break;
    batch.insert(batch.end(), more->begin(), more->end());
  }
  if (batch.empty() || (drop_last_ && batch.size() < batch_size_)) return std::nullopt;
  return batch;
}

void BatchSampler::save(serialize::OutputArchive& archive) const {
  serialize::OutputArchive inner;
  sampler_->save(inner);
  archive.write("sampler", inner);
}

void BatchSampler::load(serialize::InputArchive& archive) {
  serialize::InputArchive inner;
  archive.read("sampler", inner);
  sampler_->load(inner);
}

}  // namespace ember::data::samplers
