// Subset (the examples of a dataset at given indices) and random_split, as PyTorch's
// torch.utils.data.Subset / random_split. A Subset holds a copy of its dataset (cheap for
// tensor-backed datasets, whose tensors are shared handles), like libtorch's worker copies.
#pragma once

#include <cmath>
#include <concepts>
#include <optional>
#include <utility>
#include <vector>

#include "ember/data/datasets/base.h"
#include "ember/data/random.h"

namespace ember::data::datasets {

template <class D>
class Subset : public Dataset<Subset<D>, typename D::ExampleType> {
 public:
  using ExampleType = typename D::ExampleType;
  Subset(D dataset, std::vector<size_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {}

  ExampleType get(size_t index) override {
    EMBER_CHECK(index < indices_.size(), "Subset: index ", index, " is out of range for a subset of size ",
                indices_.size());
    return dataset_.get(indices_[index]);
  }
  std::optional<size_t> size() const override { return indices_.size(); }
  const std::vector<size_t>& indices() const { return indices_; }
  const D& dataset() const { return dataset_; }

 private:
  D dataset_;
  std::vector<size_t> indices_;
};

namespace detail {
/// PyTorch's random_split lengths: counts summing to n, or fractions summing to 1 (floor(n * f)
/// each, the remainder handed out one by one from the first split).
std::vector<size_t> split_lengths(const std::vector<double>& lengths, size_t n);
}  // namespace detail

/// Splits `dataset` into non-overlapping random subsets of the given lengths (counts, or
/// fractions summing to 1). The permutation is drawn from `seed` (default: from ember's
/// default generator, so reproducible after manual_seed).
template <class D>
std::vector<Subset<D>> random_split(D dataset, const std::vector<double>& lengths,
                                    std::optional<uint64_t> seed = std::nullopt) {
  std::optional<size_t> n = dataset.size();
  EMBER_CHECK(n.has_value(), "random_split: the dataset must have a known size");
  std::vector<size_t> counts = detail::split_lengths(lengths, *n);
  std::vector<size_t> perm =
      ember::data::detail::permutation(*n, seed ? *seed : ember::data::detail::seed_from_default_generator());
  std::vector<Subset<D>> out;
  size_t offset = 0;
  for (size_t c : counts) {
    out.emplace_back(dataset, std::vector<size_t>(perm.begin() + offset, perm.begin() + offset + c));
    offset += c;
  }
  return out;
}

/// random_split with integer counts (a std::vector<size_t> and the like).
template <class D, std::integral I>
std::vector<Subset<D>> random_split(D dataset, const std::vector<I>& lengths,
                                    std::optional<uint64_t> seed = std::nullopt) {
  return random_split(std::move(dataset), std::vector<double>(lengths.begin(), lengths.end()), seed);
}

}  // namespace ember::data::datasets
