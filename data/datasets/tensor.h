// TensorDataset: examples are the rows (dim 0) of a data tensor and a target tensor
// (PyTorch's TensorDataset(data, target)); libtorch's one-tensor form leaves target undefined.
#pragma once

#include <utility>

#include "ember/core/tensor.h"
#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

namespace detail {
/// t's rows (dim 0) at `indices`, stacked: a serial row memcpy for contiguous CPU tensors (a
/// batch is too small to be worth a parallel region), index_select otherwise.
Tensor gather_rows(const Tensor& t, ArrayRef<size_t> indices);
}  // namespace detail

class TensorDataset : public Dataset<TensorDataset, Example<>> {
 public:
  /// Rows of `data` without targets (libtorch's TensorDataset(tensor)).
  explicit TensorDataset(Tensor data) : data_(std::move(data)) {
    EMBER_CHECK(data_.defined() && data_.dim() >= 1,
                "TensorDataset: expected a tensor with at least one dimension");
  }
  /// Rows of `data` paired with rows of `target`; both must have the same size in dim 0.
  TensorDataset(Tensor data, Tensor target) : data_(std::move(data)), target_(std::move(target)) {
    EMBER_CHECK(data_.defined() && target_.defined() && data_.dim() >= 1 && target_.dim() >= 1,
                "TensorDataset: expected tensors with at least one dimension");
    EMBER_CHECK(data_.size(0) == target_.size(0), "Size mismatch between tensors: data has ", data_.size(0),
                " rows and target has ", target_.size(0));
  }

  Example<> get(size_t index) override {
    auto i = static_cast<int64_t>(index);
    return {data_.select(0, i), target_.defined() ? target_.select(0, i) : Tensor()};
  }
  /// The rows at `indices` stacked, as .map(Stack<>()) gives, gathered in one pass per tensor.
  Example<> get_batch_stacked(ArrayRef<size_t> indices) const {
    return {detail::gather_rows(data_, indices),
            target_.defined() ? detail::gather_rows(target_, indices) : Tensor()};
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(data_.size(0)); }
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  Tensor data_, target_;
};

}  // namespace ember::data::datasets
