// StatefulDataset: a dataset that keeps its own position (a reader over files or chunks)
// rather than answering index requests, as libtorch's datasets::StatefulDataset. get_batch
// returns nullopt once the epoch is exhausted; reset() starts the next epoch; save()/load()
// checkpoint the position through an archive (core/archive.h).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ember/core/archive.h"
#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = size_t>
class StatefulDataset : public BatchDataset<Self, std::optional<Batch>, BatchRequest> {
 public:
  /// Starts a new epoch.
  virtual void reset() = 0;
  /// Writes the dataset's position to `archive`.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  /// Restores a position save() wrote.
  virtual void load(serialize::InputArchive& archive) = 0;
};

template <class... Args>
serialize::OutputArchive& operator<<(serialize::OutputArchive& archive, const StatefulDataset<Args...>& dataset) {
  dataset.save(archive);
  return archive;
}

template <class... Args>
serialize::InputArchive& operator>>(serialize::InputArchive& archive, StatefulDataset<Args...>& dataset) {
  dataset.load(archive);
  return archive;
}

}  // namespace ember::data::datasets
