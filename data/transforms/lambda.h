// Transforms from functions: Lambda (per example) and BatchLambda (per batch), as libtorch's.
#pragma once

#include <functional>
#include <utility>

#include "ember/data/example.h"
#include "ember/data/transforms/base.h"

namespace ember::data::transforms {

/// Applies a function to each example.
template <class Input = Example<>, class Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

/// Applies a function to a whole batch.
template <class Input, class Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

}  // namespace ember::data::transforms
