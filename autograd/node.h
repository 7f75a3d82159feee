// Node and Edge: the backward graph. A Node turns the gradients of its forward outputs into
// gradients of its forward inputs; its next_edges say where each input gradient goes.
// Leaves end in AccumulateGrad, which adds into tensor.grad().
// (Nodes are owned by the tensors they produced and by the nodes downstream of them, so a
// graph lives exactly as long as something can still call backward through it.)
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::autograd {

class Node;

struct Edge {
  std::shared_ptr<Node> function;  // null: this input needs no gradient
  uint32_t input_nr = 0;           // which input of `function` receives the gradient
  bool is_valid() const { return function != nullptr; }
};

/// Shape, dtype and device of one forward output, so a gradient can be checked and
/// un-broadcast against it.
struct InputMetadata {
  DimVector sizes;
  ScalarType dtype;
  Device device;
};

/// One tensor a node keeps for backward, as graph views show it (autograd/graph_export.h).
struct SavedTensorInfo {
  std::string name;  // "input0", "result", ...
  DimVector sizes;
  ScalarType dtype;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  /// Frees the graph below iteratively (a long chain would overflow the stack otherwise).
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Gradients of the forward inputs from gradients of the forward outputs.
  virtual TensorList apply(TensorList&& grads) = 0;
  /// PyTorch's name, e.g. "MulBackward0".
  virtual std::string name() const = 0;
  /// Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}
  /// The tensors kept for backward, for graph views; empty once released.
  virtual std::vector<SavedTensorInfo> saved_tensor_info() const { return {}; }

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }
  /// Metadata of the forward outputs, i.e. of the gradients this node receives.
  std::vector<InputMetadata>& input_metadata() { return input_metadata_; }
  size_t num_inputs() const { return input_metadata_.size(); }
  uint64_t sequence_nr() const { return sequence_nr_; }

  /// Hooks on the gradient arriving for forward output `output_nr` (tensor.register_hook
  /// on a non-leaf). Returning an undefined tensor keeps the gradient.
  using PreHook = std::function<Tensor(const Tensor&)>;
  unsigned add_pre_hook(uint32_t output_nr, PreHook fn);
  bool remove_pre_hook(unsigned handle);
  /// Applies the pre-hooks, then the retain_grad slots, to the incoming gradients (in
  /// place). The engine calls it once per backward pass, before capturing or applying.
  virtual void run_pre_hooks(TensorList& grads);
  /// retain_grad(): the gradient for output `output_nr` is also stored in `slot`, which the
  /// tensor owns (a weak link, so the graph does not keep the tensor alive).
  void add_retained(uint32_t output_nr, const std::shared_ptr<Tensor>& slot);
  /// Forgets a retain_grad slot (the tensor moved to a new grad_fn after an in-place op).
  void remove_retained(const std::shared_ptr<Tensor>& slot);

 protected:
  std::vector<Edge> next_edges_;
  std::vector<InputMetadata> input_metadata_;
  uint64_t sequence_nr_;

 private:
  struct HookEntry { unsigned handle; uint32_t output_nr; PreHook fn; };
  std::vector<HookEntry> pre_hooks_;
  std::vector<std::pair<uint32_t, std::weak_ptr<Tensor>>> retained_;
};

/// The sink of a leaf tensor: adds the incoming gradient to leaf.grad().
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  TensorList apply(TensorList&& grads) override;
  /// The leaf's tensor hooks (register_hook on a leaf) run here, so autograd::grad sees them too.
  void run_pre_hooks(TensorList& grads) override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

/// Where the gradient of `t` flows into the graph: its grad_fn, or its leaf accumulator,
/// or nowhere (invalid edge) if it does not require grad.
Edge gradient_edge(const Tensor& t);
/// Makes `t` an output of `fn` (sets grad_fn and output_nr).
void set_history(Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);
/// Adds a hook id counter shared by tensor and node hooks.
unsigned next_hook_handle();

}  // namespace ember::autograd
