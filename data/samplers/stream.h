// StreamSampler: the sampler of a StreamDataset (libtorch's samplers::StreamSampler). A stream
// has no indices; each request is only a count (BatchSize), and a pass ends once epoch_size
// examples have been asked for (the last request is cut to what is left).
#pragma once

#include <cstddef>
#include <optional>

#include "ember/data/samplers/base.h"

namespace ember::data::samplers {

/// A request for `size` examples from a stream (converts to size_t, the request type of
/// datasets::StreamDataset).
struct BatchSize : public CustomBatchRequest {
  explicit BatchSize(size_t size) : size_(size) {}
  size_t size() const noexcept override { return size_; }
  operator size_t() const noexcept { return size_; }  // NOLINT: implicit, as libtorch's
  size_t size_;
};

class StreamSampler : public Sampler<BatchSize> {
 public:
  /// A pass of `epoch_size` examples.
  explicit StreamSampler(size_t epoch_size) : epoch_size_(epoch_size) {}
  /// Starts a new pass (of `new_size` examples, when given).
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  /// The next request: batch_size, or what is left of the pass; nullopt once it is done.
  std::optional<BatchSize> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  size_t examples_retrieved_so_far_ = 0;
  size_t epoch_size_;
};

}  // namespace ember::data::samplers
