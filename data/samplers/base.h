// Sampler: the source of index batches a DataLoader turns into data batches, as libtorch's
// torch::data::samplers::Sampler. reset() starts a new pass (epoch); next(n) returns up to n
// indices, or nothing when the pass is over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ember::data::samplers {

template <class BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  /// Starts a new pass over `new_size` examples (or the current size).
  virtual void reset(std::optional<size_t> new_size) = 0;
  /// The next batch of at most `batch_size` indices; nullopt when the pass is exhausted.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  /// Chooses the epoch the next reset() draws (random samplers); deterministic ones ignore it.
  virtual void set_epoch(uint64_t /*epoch*/) {}
};

}  // namespace ember::data::samplers
