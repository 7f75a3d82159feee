// SharedBatchDataset: a dataset held by shared_ptr, so the DataLoader's workers (which copy
// their dataset) all read the one instance, as libtorch's datasets::SharedBatchDataset;
// make_shared_dataset<D>(args...) builds one. The underlying dataset must then be safe to call
// from several threads.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

template <class UnderlyingDataset>
class SharedBatchDataset
    : public BatchDataset<SharedBatchDataset<UnderlyingDataset>, typename UnderlyingDataset::BatchType,
                          typename UnderlyingDataset::BatchRequestType> {
 public:
  using BatchType = typename UnderlyingDataset::BatchType;
  using BatchRequestType = typename UnderlyingDataset::BatchRequestType;

  /* implicit */ SharedBatchDataset(std::shared_ptr<UnderlyingDataset> shared_dataset)  // NOLINT: as libtorch
      : dataset_(std::move(shared_dataset)) {
    EMBER_CHECK(dataset_ != nullptr, "SharedBatchDataset: the dataset pointer is null");
  }

  BatchType get_batch(BatchRequestType request) override { return dataset_->get_batch(std::move(request)); }
  std::optional<size_t> size() const override { return dataset_->size(); }

  UnderlyingDataset& operator*() { return *dataset_; }
  const UnderlyingDataset& operator*() const { return *dataset_; }
  UnderlyingDataset* operator->() { return dataset_.get(); }
  const UnderlyingDataset* operator->() const { return dataset_.get(); }

  /// Resets the underlying (stateful) dataset.
  void reset() { dataset_->reset(); }

 private:
  std::shared_ptr<UnderlyingDataset> dataset_;
};

/// A SharedBatchDataset over a new UnderlyingDataset(args...).
template <class UnderlyingDataset, class... Args>
SharedBatchDataset<UnderlyingDataset> make_shared_dataset(Args&&... args) {
  return std::make_shared<UnderlyingDataset>(std::forward<Args>(args)...);
}

}  // namespace ember::data::datasets
