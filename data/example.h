// Example: one sample of a dataset, a (data, target) pair, as libtorch's torch::data::Example.
// TensorExample is an example with data only (Example<Tensor, NoTarget>).
#pragma once

#include <utility>

#include "ember/core/tensor.h"

namespace ember::data {

namespace example {
/// Marks an Example that has no target.
struct NoTarget {};
}  // namespace example

/// A (data, target) pair.
template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}
  Data data;
  Target target;
};

/// An example with data only.
template <class Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // NOLINT: implicit as libtorch's
  operator Data&() { return data; }              // NOLINT
  operator const Data&() const { return data; }  // NOLINT
  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace ember::data
