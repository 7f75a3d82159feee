// SavedTensor: version-checked tensors kept for backward.
#include "ember/autograd/saved_tensor.h"

#include "ember/autograd/grad_mode.h"

namespace ember::autograd {
namespace {

std::string type_string(const Tensor& t) {
  return detail::str_cat("torch.", t.is_cuda() ? "cuda." : "", scalar_type_name(t.dtype()), "Tensor");
}

const char* kSecondBackward =
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling backward.";

}  // namespace

SavedTensor::SavedTensor(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  version_ = t._version();
  is_output_ = is_output;
  requires_grad_ = t.requires_grad();
  if (is_output) {
    data_ = t.detach();  // no grad_fn: the node owning us is the grad_fn (avoids a cycle)
    output_nr_ = t.output_nr();
  } else {
    data_ = t;
  }
}

/// PyTorch's text: which tensor changed and, if it has one, the node that produced it.
[[noreturn]] void SavedTensor::throw_version_error(const std::shared_ptr<Node>& owner, const char* op_name) const {
  std::string producer;
  if (is_output_) {
    producer = owner ? owner->name() : std::string(op_name);
  } else if (const auto& fn = data_.grad_fn()) {
    producer = fn->name();  // the input's current history, as PyTorch reports it
  }
  uint32_t nr = is_output_ ? output_nr_ : data_.output_nr();
  std::string which = producer.empty() ? "" : detail::str_cat(", which is output ", nr, " of ", producer, ",");
  detail::throw_error(detail::str_cat(
      "one of the variables needed for gradient computation has been modified by an inplace "
      "operation: [", type_string(data_), " ", data_.sizes(), "]", which, " is at version ",
      data_._version(), "; expected version ", version_,
      " instead. Hint: enable anomaly detection to find the operation that failed to compute "
      "its gradient, with torch.autograd.set_detect_anomaly(True)."));
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner, const char* op_name) const {
  EMBER_CHECK(!released_, kSecondBackward);
  if (!data_.defined()) return {};
  if (data_._version() != version_) throw_version_error(owner, op_name);
  if (is_output_ && requires_grad_ && owner) {
    Tensor t = data_.detach();
    set_history(t, owner, output_nr_);
    return t;
  }
  return data_;
}

Tensor SavedTensors::input(size_t i) const { return inputs.at(i).unpack(owner_.lock(), op_name_); }
Tensor SavedTensors::output(size_t i) const { return outputs.at(i).unpack(owner_.lock(), op_name_); }

}  // namespace ember::autograd
