// MapDataset: a dataset whose batches pass through a transform (dataset.map(transform)).
// A per-example transform is applied sample by sample inside a SampleScope, so random
// transforms are reproducible and errors name the sample.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "ember/data/datasets/base.h"
#include "ember/data/transforms/base.h"

namespace ember::data::transforms {
template <class T>
struct Stack;
}  // namespace ember::data::transforms

namespace ember::data::datasets {

namespace detail {
/// The example type a per-example transform produces (void for batch transforms).
template <class T, class = void>
struct output_example {
  using type = void;
};
template <class T>
struct output_example<T, std::void_t<typename T::OutputType>> {
  using type = typename T::OutputType;
};
}  // namespace detail

template <class Source, class AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<Source, AppliedTransform>, typename AppliedTransform::OutputBatchType,
                          typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;
  /// The single example get() returns (void when the transform maps whole batches).
  using ExampleType = typename detail::output_example<AppliedTransform>::type;
  static constexpr int kMapDepth = detail::map_depth<Source>() + 1;
  static constexpr bool kPerExample = transforms::ExampleTransform<AppliedTransform>;

  MapDataset(Source dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType request) override {
    if constexpr (std::is_same_v<AppliedTransform, transforms::Stack<Example<>>> &&
                  requires(Source & s) { s.get_batch_stacked(request); }) {
      // Fast path: a tensor-backed dataset gathers the rows directly (same values as stacking).
      return dataset_.get_batch_stacked(request);
    } else if constexpr (kPerExample && std::is_convertible_v<BatchRequestType, ArrayRef<size_t>>) {
      ArrayRef<size_t> indices = request;
      auto batch = dataset_.get_batch(request);
      OutputBatchType out;
      out.reserve(batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        SampleScope scope(i < indices.size() ? indices[i] : i, kMapDepth);
        out.push_back(transform_.apply(std::move(batch[i])));
      }
      return out;
    } else {
      return transform_.apply_batch(dataset_.get_batch(std::move(request)));
    }
  }

  /// One transformed example (when the source has get() and the transform is per-example).
  auto get(size_t index) requires(kPerExample&& requires(Source& s) { s.get(index); }) {
    auto example = [&] {
      SampleScope source_scope(index, detail::map_depth<Source>());
      return dataset_.get(index);
    }();
    SampleScope scope(index, kMapDepth);
    return transform_.apply(std::move(example));
  }

  std::optional<size_t> size() const override { return dataset_.size(); }
  const Source& dataset() const { return dataset_; }
  Source& dataset() { return dataset_; }
  const AppliedTransform& transform() const { return transform_; }

 private:
  Source dataset_;
  AppliedTransform transform_;
};

/// map(dataset, transform), as libtorch's datasets::map.
template <class Source, class AppliedTransform>
MapDataset<Source, AppliedTransform> map(Source dataset, AppliedTransform transform) {
  return MapDataset<Source, AppliedTransform>(std::move(dataset), std::move(transform));
}

}  // namespace ember::data::datasets
