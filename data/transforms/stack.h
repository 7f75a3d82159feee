// Stack: the collation that turns a vector of examples into one example of stacked tensors
// (libtorch's transforms::Stack; PyTorch's default_collate for tensor pairs).
#pragma once

#include <utility>
#include <vector>

#include "ember/core/ops/shape.h"
#include "ember/data/example.h"
#include "ember/data/transforms/collate.h"

namespace ember::data::transforms {

template <class T = Example<>>
struct Stack;

/// Stacks data and targets along a new dim 0; undefined targets stay undefined.
template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      if (e.target.defined()) targets.push_back(std::move(e.target));
    }
    EMBER_CHECK(targets.empty() || targets.size() == data.size(),
                "Stack: some examples have a target and some do not");
    Tensor target = targets.empty() ? Tensor() : ember::stack(targets);
    return {ember::stack(data), std::move(target)};
  }
};

/// Stacks the data of target-less examples.
template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return ember::stack(data);
  }
};

}  // namespace ember::data::transforms
