// DataLoaderOptions: libtorch's options (batch_size, workers, max_jobs, timeout,
// enforce_ordering, drop_last) plus those of PyTorch's Python DataLoader (shuffle, seed,
// sampler, pin_memory).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "ember/data/samplers/base.h"
#include "ember/core/arg.h"

namespace ember::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  /*implicit*/ DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: as libtorch

  /// Examples per batch.
  EMBER_ARG(size_t, batch_size) = 1;
  /// Threads that load batches ahead of the consumer (0: load on the calling thread).
  EMBER_ARG(size_t, workers) = 0;
  /// Batches in flight at once (default 2 * workers).
  EMBER_ARG(std::optional<size_t>, max_jobs);
  /// How long to wait for a worker's batch before failing (workers > 0 only).
  EMBER_ARG(std::optional<std::chrono::milliseconds>, timeout);
  /// Deliver batches in sampler order (true) or as they finish (false).
  EMBER_ARG(bool, enforce_ordering) = true;
  /// Drop a last batch smaller than batch_size.
  EMBER_ARG(bool, drop_last) = false;
  /// Without an explicit sampler: true -> RandomSampler, false -> SequentialSampler. Unset
  /// means libtorch's default for make_data_loader(dataset, options): RandomSampler.
  EMBER_ARG(std::optional<bool>, shuffle);
  /// Seeds the default RandomSampler and the random transforms (Note [Reproducible random
  /// transforms]); unset draws one from ember's default generator (see manual_seed).
  EMBER_ARG(std::optional<uint64_t>, seed);
  /// The index sampler to use instead of the shuffle-chosen one.
  EMBER_ARG(std::shared_ptr<samplers::Sampler<>>, sampler);
  /// Page-locked batches for faster host-to-device copies (PyTorch's pin_memory).
  EMBER_ARG(bool, pin_memory) = false;
};

}  // namespace ember::data
