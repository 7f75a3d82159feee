// SavedTensor: a tensor kept for backward, stamped with its version so an in-place change
// after saving is caught (Note [Version counter] in core/tensor_impl.h).
// SavedTensors: what an op's backward sees — saved inputs/outputs and input metadata.
#pragma once

#include <memory>
#include <vector>

#include "ember/autograd/node.h"
#include "ember/core/tensor.h"

namespace ember::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  /// `is_output`: t is an output of the node that saves it. Such a tensor is stored without
  /// its grad_fn (that would be a reference cycle) and gets it back on unpack.
  SavedTensor(const Tensor& t, bool is_output);
  /// The saved tensor; `owner` is the node it was saved for (needed for outputs). Raises
  /// PyTorch's errors after release_variables or an in-place change since saving.
  Tensor unpack(const std::shared_ptr<Node>& owner, const char* op_name) const;
  void reset() { data_.reset(); released_ = true; }
  bool defined() const { return data_.defined(); }
  /// The stored tensor without unpack's checks, for looking at its shape and dtype.
  const Tensor& peek() const { return data_; }

 private:
  [[noreturn]] void throw_version_error(const std::shared_ptr<Node>& owner, const char* op_name) const;
  Tensor data_;
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

/// The view of saved state an op's backward receives.
class SavedTensors {
 public:
  Tensor input(size_t i) const;
  Tensor output(size_t i = 0) const;
  IntArrayRef input_sizes(size_t i) const { return meta_[i].sizes; }
  ScalarType input_dtype(size_t i) const { return meta_[i].dtype; }
  Device input_device(size_t i) const { return meta_[i].device; }
  size_t num_inputs() const { return meta_.size(); }
  /// Whether input i needs a gradient; backward may return undefined for the others.
  bool needs_grad(size_t i) const { return needs_grad_[i]; }

  // Filled by run_op when it records the node.
  std::vector<SavedTensor> inputs, outputs;
  std::vector<InputMetadata> meta_;
  std::vector<bool> needs_grad_;
  std::weak_ptr<Node> owner_;
  const char* op_name_ = "";
};

}  // namespace ember::autograd
