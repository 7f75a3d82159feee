// Random numbers for data loading: a Philox stream, seeded permutations, and the per-sample
// stream random transforms draw from (Note [Reproducible random transforms]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ember::data {

// Note [Reproducible random transforms]
// A random transform (RandomCrop, RandomHorizontalFlip, or a user's Lambda calling
// sample_rng()) draws from a Philox stream keyed by (loader seed, epoch, sample index,
// pipeline stage). The DataLoader sets (seed, epoch) on whichever thread loads a batch
// (LoaderSeedGuard), and datasets mark the sample being produced (SampleScope), so a
// sample's random numbers do not depend on the worker that loads it, the worker count, or
// the order batches are loaded in. `stage` is the depth of the .map() that applies the
// transform, so two random transforms in different .map() calls get independent streams.
// Outside a DataLoader the key comes from ember's default CPU generator (manual_seed).

/// Counter-based stream: the Philox-4x32-10 blocks (key, counter), (key, counter + 1), ...
class PhiloxStream {
 public:
  explicit PhiloxStream(uint64_t key = 0, uint64_t counter = 0) : key_(key), counter_(counter) {}
  uint32_t next_u32();
  uint64_t next_u64();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [0, n) without modulo bias; n > 0.
  uint64_t below(uint64_t n);

 private:
  uint64_t key_, counter_;
  uint32_t buf_[4] = {0, 0, 0, 0};
  int pos_ = 4;
};

namespace detail {
/// A well-mixed 64-bit hash of (a, b) (splitmix64 finalizer over both).
uint64_t mix(uint64_t a, uint64_t b);
/// A 64-bit seed drawn from ember's default CPU generator: reproducible after manual_seed.
uint64_t seed_from_default_generator();
/// A uniformly random permutation of 0..n-1 (Fisher-Yates) from the stream `key`.
std::vector<size_t> permutation(size_t n, uint64_t key);
}  // namespace detail

/// Sets the loader's (seed, epoch) on this thread while a batch is loaded.
class LoaderSeedGuard {
 public:
  LoaderSeedGuard(uint64_t seed, uint64_t epoch);
  ~LoaderSeedGuard();
  LoaderSeedGuard(const LoaderSeedGuard&) = delete;
  LoaderSeedGuard& operator=(const LoaderSeedGuard&) = delete;

 private:
  bool prev_active_;
  uint64_t prev_seed_, prev_epoch_;
};

/// Marks that this thread is producing sample `index` at pipeline stage `stage` (0 is the
/// dataset's own get()). If an exception leaves the scope, the index is recorded for the
/// DataLoader's error message (failed_sample_index()).
class SampleScope {
 public:
  SampleScope(size_t index, int stage);
  ~SampleScope();
  SampleScope(const SampleScope&) = delete;
  SampleScope& operator=(const SampleScope&) = delete;

 private:
  std::optional<size_t> prev_index_;
  int prev_stage_;
  bool prev_valid_;
  PhiloxStream prev_stream_;
  int exceptions_;
};

/// The random stream of the sample being loaded (see the Note above).
PhiloxStream& sample_rng();

/// The innermost sample index an exception escaped from on this thread, if any.
std::optional<size_t> failed_sample_index();
void clear_failed_sample_index();

}  // namespace ember::data
