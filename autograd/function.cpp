// The non-template half of custom autograd functions: how forward's outputs join the graph
// (libtorch's _wrap_outputs), what is saved, and the checks on backward's result.
#include "ember/autograd/function.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "ember/autograd/view_history.h"
#include "ember/core/ops/creation.h"

namespace ember::autograd {
namespace {

bool contains(const std::vector<TensorImpl*>& v, const Tensor& t) {
  return std::find(v.begin(), v.end(), t.unsafeGetTensorImpl()) != v.end();
}

bool is_input(const TensorList& inputs, const Tensor& t) {
  for (const Tensor& in : inputs)
    if (in.defined() && in.is_same(t)) return true;
  return false;
}

/// Makes output i of `node` out of forward's result `out` (Note [View history] covers the
/// dirty-input case: the input itself takes the node as its new history).
Tensor connect_output(const std::shared_ptr<Node>& node, const TensorList& inputs, Tensor out, uint32_t i,
                      bool dirty, bool differentiable) {
  if (dirty) {
    check_inplace(out);
    if (differentiable) rebase_history(out, Edge{node, i});
    return out;
  }
  // An input returned unchanged becomes a new alias, so the input keeps its own history.
  if (is_input(inputs, out)) out = out.detach();
  if (differentiable) set_history(out, node, i);
  return out;
}

}  // namespace

std::string cpp_node_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  return "torch::autograd::CppNode<" + name + ">";
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs) non_differentiable_.push_back(t.unsafeGetTensorImpl());
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs) dirty_.push_back(t.unsafeGetTensorImpl());
}

variable_list AutogradContext::get_saved_variables() const {
  variable_list out;
  auto owner = node_.lock();
  for (const SavedTensor& s : saved_) out.push_back(s.unpack(owner, "CppNode"));
  return out;
}

TensorList FunctionWiring::select_gradients(const std::string& node_name, variable_list grads) const {
  // Extra trailing results are allowed as long as they are undefined (as in libtorch).
  while (grads.size() > num_args && !grads.back().defined()) grads.pop_back();
  EMBER_CHECK(grads.size() == num_args, "function ", node_name, " returned an incorrect number of gradients (expected ",
              num_args, ", got ", grads.size(), ")");
  TensorList out;
  size_t next_tensor = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    bool is_tensor = next_tensor < tensor_positions.size() && tensor_positions[next_tensor] == i;
    if (is_tensor) {
      out.push_back(grads[i]);
      ++next_tensor;
      continue;
    }
    EMBER_CHECK(!grads[i].defined(), "function ", node_name, " returned a gradient different that is defined at position ",
                i + 1, ", but the corresponding forward input was not a Variable");
  }
  return out;
}

void FunctionWiring::materialize(TensorList& grads, const std::vector<InputMetadata>& meta) {
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined())
      grads[i] = zeros(meta[i].sizes, TensorOptions().dtype(meta[i].dtype).device(meta[i].device));
}

TensorList FunctionWiring::wrap_outputs(const std::shared_ptr<Node>& node, AutogradContext& ctx,
                                        const TensorList& inputs, TensorList outs, bool record) {
  for (TensorImpl* d : ctx.dirty_) {
    bool returned = false;
    for (const Tensor& o : outs) returned = returned || o.unsafeGetTensorImpl() == d;
    EMBER_CHECK(returned, "Some elements marked as dirty during the forward method were not returned as output. "
                "The inputs that are modified inplace must all be outputs of the Function.");
  }
  if (record) {
    for (const Tensor& in : inputs) node->mutable_next_edges().push_back(in.defined() ? gradient_edge(in) : Edge{});
    for (uint32_t i = 0; i < outs.size(); ++i) {
      Tensor& o = outs[i];
      node->input_metadata().push_back({DimVector(o.sizes()), o.dtype(), o.device()});
      bool differentiable = o.is_floating_point() && !contains(ctx.non_differentiable_, o);
      o = connect_output(node, inputs, o, i, contains(ctx.dirty_, o), differentiable);
    }
  }
  // Saved after the outputs are wired, so a saved output is recognised by its grad_fn and
  // kept without it (avoiding a cycle node -> saved output -> node).
  for (const Tensor& s : ctx.to_save_) {
    bool is_output = record && s.defined() && s.grad_fn() == node;
    ctx.saved_.emplace_back(s, is_output);
  }
  ctx.to_save_.clear();
  return outs;
}

}  // namespace ember::autograd
