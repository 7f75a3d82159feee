// Transform bases, as libtorch's torch::data::transforms: a BatchTransform maps a whole batch,
// a Transform maps each example of a batch (apply), and is what .map() applies per sample.
#pragma once

#include <utility>
#include <vector>

namespace ember::data::transforms {

/// Maps an input batch to an output batch (e.g. collation).
template <class InputBatch, class OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// Maps one example to another; a batch is mapped element by element.
template <class Input, class Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto& x : input_batch) out.push_back(apply(std::move(x)));
    return out;
  }
};

/// Whether T maps single examples (derives from Transform), so .map() can apply it per sample.
template <class T>
concept ExampleTransform = requires(T t, typename T::InputType in) {
  {t.apply(std::move(in))};
};

}  // namespace ember::data::transforms
