// Custom autograd functions, as libtorch's torch::autograd::Function:
//   struct MulConst : ember::autograd::Function<MulConst> {
//     static Tensor forward(AutogradContext* ctx, Tensor x, double k) {
//       ctx->saved_data["k"] = k; return x * k; }
//     static variable_list backward(AutogradContext* ctx, variable_list g) {
//       return {g[0] * ctx->saved_data["k"].toDouble(), Tensor()}; }
//   };
//   Tensor y = MulConst::apply(x, 3.0);
// backward returns one entry per forward argument (undefined for non-tensors); the node is
// named "torch::autograd::CppNode<MulConst>" as in libtorch.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <typeinfo>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/autograd/saved_tensor.h"
#include "ember/core/ivalue.h"

namespace ember {

using variable_list = TensorList;
using tensor_list = TensorList;  // libtorch spells both

namespace autograd {

// libtorch spells the tensor lists torch::autograd::variable_list / tensor_list.
using ::ember::tensor_list;
using ::ember::variable_list;

class AutogradContext {
 public:
  /// Tensors backward will need, version-checked like any saved tensor (inputs or outputs).
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  variable_list get_saved_variables() const;
  /// Whether forward argument i (counting every argument, tensor or not) needs a gradient.
  bool needs_input_grad(size_t i) const { return i < needs_grad_.size() && needs_grad_[i]; }
  /// Outputs that get no gradient (indices, masks): they will not require grad.
  void mark_non_differentiable(const variable_list& outputs);
  /// Inputs forward modified in place (and returns): they are rebased onto this function.
  void mark_dirty(const variable_list& inputs);
  /// false: backward receives undefined tensors for outputs that got no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }

  std::unordered_map<std::string, IValue> saved_data;

 private:
  template <class T> friend struct Function;
  template <class T> friend class CppNode;
  friend struct FunctionWiring;
  variable_list to_save_;
  std::vector<SavedTensor> saved_;
  std::vector<bool> needs_grad_;
  std::vector<TensorImpl*> non_differentiable_, dirty_;
  bool materialize_grads_ = true;
  std::weak_ptr<Node> node_;
};

/// What a custom function's node keeps besides its context; shared by every CppNode<T>.
struct FunctionWiring {
  size_t num_args = 0;
  std::vector<size_t> tensor_positions;  // argument index of each tensor input (edge order)

  /// Gradients of the tensor arguments from backward's per-argument result, with
  /// libtorch's checks (count; no gradient for a non-tensor argument).
  TensorList select_gradients(const std::string& node_name, variable_list grads) const;
  /// Replaces undefined incoming gradients by zeros of the output's shape.
  static void materialize(TensorList& grads, const std::vector<InputMetadata>& meta);
  /// Connects forward's outputs to `node` (or not, when nothing is recorded) and saves
  /// ctx's tensors. Returns the outputs the caller sees.
  static TensorList wrap_outputs(const std::shared_ptr<Node>& node, AutogradContext& ctx, const TensorList& inputs,
                                 TensorList outputs, bool record);
};

/// "torch::autograd::CppNode<Name>", as libtorch names a custom function's node.
std::string cpp_node_name(const char* mangled);

/// The node that runs a custom Function's backward.
template <class T>
class CppNode final : public Node {
 public:
  std::string name() const override { return cpp_node_name(typeid(T).name()); }
  TensorList apply(TensorList&& grads) override {
    if (ctx.materialize_grads_) FunctionWiring::materialize(grads, input_metadata_);
    ctx.node_ = weak_from_this();
    return wiring.select_gradients(name(), T::backward(&ctx, grads));
  }
  void release_variables() override {
    for (auto& s : ctx.saved_) s.reset();
  }
  AutogradContext ctx;
  FunctionWiring wiring;
};

namespace detail {
template <class A>
void collect_tensor(const A& a, size_t pos, TensorList& tensors, std::vector<size_t>& positions) {
  if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) {
    tensors.push_back(a);
    positions.push_back(pos);
  }
}
inline TensorList as_list(const Tensor& t) { return {t}; }
inline TensorList as_list(const TensorList& t) { return t; }
}  // namespace detail

template <class T>
struct Function {
  /// Runs T::forward without recording, then records one CppNode<T> for its outputs.
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CppNode<T>>();
    TensorList inputs;
    std::vector<size_t>& positions = node->wiring.tensor_positions;
    size_t pos = 0;
    (detail::collect_tensor(args, pos++, inputs, positions), ...);
    node->wiring.num_args = sizeof...(Args);
    node->ctx.needs_grad_.assign(sizeof...(Args), false);
    bool any = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      bool rg = inputs[i].defined() && inputs[i].requires_grad();
      node->ctx.needs_grad_[positions[i]] = rg;
      any = any || rg;
    }
    bool record = GradMode::is_enabled() && any;
    using Ret = decltype(T::forward(&node->ctx, std::forward<Args>(args)...));
    Ret result;
    {
      AutoGradMode off(false);
      result = T::forward(&node->ctx, std::forward<Args>(args)...);
    }
    TensorList outs = FunctionWiring::wrap_outputs(node, node->ctx, inputs, detail::as_list(result), record);
    if constexpr (std::is_same_v<Ret, Tensor>) return outs[0];
    else return outs;
  }
};

}  // namespace autograd
}  // namespace ember
