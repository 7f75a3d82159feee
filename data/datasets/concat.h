// ConcatDataset: datasets of one type end to end (PyTorch's torch.utils.data.ConcatDataset).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

template <class D>
class ConcatDataset : public Dataset<ConcatDataset<D>, typename D::ExampleType> {
 public:
  using ExampleType = typename D::ExampleType;
  explicit ConcatDataset(std::vector<D> datasets) : datasets_(std::move(datasets)) {
    EMBER_CHECK(!datasets_.empty(), "datasets should not be an empty iterable");
    size_t total = 0;
    for (const D& d : datasets_) {
      auto n = d.size();
      EMBER_CHECK(n.has_value(), "ConcatDataset: every dataset must have a known size");
      total += *n;
      ends_.push_back(total);
    }
  }

  ExampleType get(size_t index) override {
    EMBER_CHECK(index < ends_.back(), "ConcatDataset: index ", index,
                " is out of range for a dataset of size ", ends_.back());
    // The first dataset whose cumulative end is past `index`.
    size_t k = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), index) - ends_.begin());
    size_t start = k == 0 ? 0 : ends_[k - 1];
    return datasets_[k].get(index - start);
  }
  std::optional<size_t> size() const override { return ends_.back(); }
  /// Cumulative sizes (PyTorch's cumulative_sizes).
  const std::vector<size_t>& cumulative_sizes() const { return ends_; }

 private:
  std::vector<D> datasets_;
  std::vector<size_t> ends_;
};

}  // namespace ember::data::datasets
