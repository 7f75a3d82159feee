// Sampler: the source of index batches a DataLoader turns into data batches, as libtorch's
// torch::data::samplers::Sampler. reset() starts a new pass (epoch); next(n) returns up to n
// indices, or nothing when the pass is over. save()/load() write and restore the position in
// the pass through an archive (core/archive.h), as libtorch's; `archive << sampler` and
// torch::save(sampler, path) call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/core/archive.h"

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
  /// Writes the sampler's state (its pass and position in it) to `archive`.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  /// Restores a state save() wrote, so next() continues where the saved sampler was.
  virtual void load(serialize::InputArchive& archive) = 0;
};

/// A batch request that is not a list of indices (libtorch's CustomBatchRequest).
struct CustomBatchRequest {
  virtual ~CustomBatchRequest() = default;
  /// The number of examples the request asks for.
  virtual size_t size() const = 0;
};

template <class BatchRequest>
serialize::OutputArchive& operator<<(serialize::OutputArchive& archive, const Sampler<BatchRequest>& sampler) {
  sampler.save(archive);
  return archive;
}
template <class BatchRequest>
serialize::InputArchive& operator>>(serialize::InputArchive& archive, Sampler<BatchRequest>& sampler) {
  sampler.load(archive);
  return archive;
}

}  // namespace ember::data::samplers
