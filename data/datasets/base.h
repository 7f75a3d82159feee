// Dataset bases, as libtorch's torch::data::datasets: a BatchDataset answers a batch request
// (a list of indices) with a batch; a Dataset answers get(index) with one example and builds
// batches from it. .map(transform) wraps a dataset in a MapDataset (datasets/map.h). A
// StreamDataset answers a count (its request is size_t, from a StreamSampler); a stateful
// dataset (datasets/stateful.h) answers optional batches and says when it is exhausted.
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/array_ref.h"
#include "ember/data/example.h"
#include "ember/data/random.h"

namespace ember::data::datasets {

template <class Source, class AppliedTransform>
class MapDataset;

namespace detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace detail

/// A dataset that produces whole batches from a batch request.
template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  /// Whether batches are optional (a stateful dataset that runs out): such a dataset is
  /// iterated by a StatefulDataLoader.
  static constexpr bool is_stateful = detail::is_optional<Batch>::value;
  virtual ~BatchDataset() = default;

  /// The batch for `request` (for index requests: one example per index, in order).
  virtual Batch get_batch(BatchRequest request) = 0;
  /// The number of examples, if known.
  virtual std::optional<size_t> size() const = 0;

  /// A MapDataset applying `transform` to this dataset's batches (a copy of this dataset).
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return MapDataset<Self, TransformType>(static_cast<Self&>(*this), std::move(transform));
  }
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return MapDataset<Self, TransformType>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A dataset of single examples: implement get(index) and size().
template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  /// The example at `index`.
  virtual ExampleType get(size_t index) = 0;

  /// get(i) for each index, each inside a SampleScope so random transforms and error
  /// messages know the sample (Note [Reproducible random transforms]).
  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) {
      SampleScope scope(i, 0);
      batch.push_back(get(i));
    }
    return batch;
  }
};

/// A dataset of batches drawn from a stream: each request is a number of examples (libtorch's
/// StreamDataset; iterate it with a StreamSampler).
template <class Self, class Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, size_t>;

namespace detail {
/// The .map() depth of a dataset (0 for a dataset that is not a MapDataset).
template <class D>
constexpr int map_depth() {
  if constexpr (requires { D::kMapDepth; })
    return D::kMapDepth;
  else
    return 0;
}
}  // namespace detail

}  // namespace ember::data::datasets

#include "ember/data/datasets/map.h"
