// Custom autograd functions, as libtorch's torch::autograd::Function:
//   struct MulConst : ember::autograd::Function<MulConst> {
//     static Tensor forward(AutogradContext* ctx, Tensor x, double k) {
//       ctx->saved_data["k"] = k; return x * k; }
//     static variable_list backward(AutogradContext* ctx, variable_list g) {
//       return {g[0] * ctx->saved_data["k"].toDouble(), Tensor()}; }
//   };
//   Tensor y = MulConst::apply(x, 3.0);
#pragma once

#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/autograd/saved_tensor.h"
#include "ember/core/ops/creation.h"

namespace ember {

using variable_list = TensorList;

/// A small tagged value for ctx->saved_data (libtorch's IValue, reduced to what it holds).
class IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}                                    // NOLINT
  IValue(int v) : v_(static_cast<int64_t>(v)) {}               // NOLINT
  IValue(int64_t v) : v_(v) {}                                 // NOLINT
  IValue(double v) : v_(v) {}                                  // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}                       // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}                  // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}                // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}         // NOLINT
  bool isNone() const { return v_.index() == 0; }
  bool toBool() const { return get<bool>("Bool"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  double toDouble() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
    return get<double>("Double");
  }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("IntList"); }

 private:
  template <class T>
  const T& get(const char* what) const {
    auto* p = std::get_if<T>(&v_);
    EMBER_CHECK(p, "Expected ", what, " but got another type in IValue");
    return *p;
  }
  std::variant<std::monostate, bool, int64_t, double, Tensor, std::string, std::vector<int64_t>> v_;
};

namespace autograd {

class AutogradContext {
 public:
  /// Tensors backward will need, version-checked like any saved tensor.
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  variable_list get_saved_variables() const;
  /// Whether forward input i (counting every argument) needs a gradient.
  bool needs_input_grad(size_t i) const { return i < needs_grad_.size() && needs_grad_[i]; }
  void mark_non_differentiable(const variable_list& outputs) {
    for (const Tensor& t : outputs) non_diff_.push_back(t.unsafeGetTensorImpl());
  }
  void set_materialize_grads(bool value) { materialize_grads_ = value; }

  std::unordered_map<std::string, IValue> saved_data;

  // Internal state used by Function<T>::apply and its node.
  variable_list to_save_;
  std::vector<SavedTensor> saved_;
  std::vector<bool> needs_grad_;
  std::vector<TensorImpl*> non_diff_;
  bool materialize_grads_ = true;
  std::weak_ptr<Node> node_;
};

/// The node that runs a custom Function's backward.
template <class T>
class CppNode final : public Node {
 public:
  std::string name() const override { return "CppNode"; }
  TensorList apply(TensorList&& grads) override {
    EMBER_CHECK(!released_, "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Specify retain_graph=True if you need to "
                "backward through the graph a second time.");
    if (ctx.materialize_grads_)
      for (size_t i = 0; i < grads.size(); ++i)
        if (!grads[i].defined())
          grads[i] = zeros(input_metadata_[i].sizes,
                           TensorOptions().dtype(input_metadata_[i].dtype).device(input_metadata_[i].device));
    ctx.node_ = weak_from_this();
    variable_list r = T::backward(&ctx, grads);
    EMBER_CHECK(r.size() == num_args, "function backward returned an incorrect number of gradients (expected ",
                num_args, ", got ", r.size(), ")");
    TensorList out;
    for (size_t pos : tensor_positions) out.push_back(r[pos]);
    return out;
  }
  void release_variables() override {
    for (auto& s : ctx.saved_) s.reset();
    released_ = !ctx.saved_.empty();
  }
  AutogradContext ctx;
  size_t num_args = 0;
  std::vector<size_t> tensor_positions;  // argument index of each tensor input (edge order)

 private:
  bool released_ = false;
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
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CppNode<T>>();
    TensorList inputs;
    std::vector<size_t> positions;
    size_t pos = 0;
    (detail::collect_tensor(args, pos++, inputs, positions), ...);
    node->num_args = sizeof...(Args);
    node->tensor_positions = positions;
    bool record = GradMode::is_enabled();
    bool any = false;
    node->ctx.needs_grad_.assign(sizeof...(Args), false);
    for (size_t i = 0; i < inputs.size(); ++i) {
      bool rg = inputs[i].requires_grad();
      node->ctx.needs_grad_[positions[i]] = rg;
      any = any || rg;
    }
    record = record && any;
    using Ret = decltype(T::forward(&node->ctx, std::forward<Args>(args)...));
    Ret result;
    {
      AutoGradMode off(false);
      result = T::forward(&node->ctx, std::forward<Args>(args)...);
    }
    TensorList outs = detail::as_list(result);
    if (record) {
      for (const Tensor& in : inputs) node->mutable_next_edges().push_back(gradient_edge(in));
      for (uint32_t i = 0; i < outs.size(); ++i) {
        // An output that is an input returned unchanged becomes a new alias with history.
        for (const Tensor& in : inputs)
          if (outs[i].is_same(in)) outs[i] = outs[i].detach();
        node->input_metadata().push_back({DimVector(outs[i].sizes()), outs[i].dtype(), outs[i].device()});
        bool non_diff = false;
        for (TensorImpl* p : node->ctx.non_diff_) non_diff = non_diff || p == outs[i].unsafeGetTensorImpl();
        if (!non_diff && outs[i].is_floating_point()) set_history(outs[i], node, i);
      }
    }
    for (const Tensor& s : node->ctx.to_save_) {
      bool is_output = false;
      for (const Tensor& o : outs) is_output = is_output || (s.defined() && o.is_same(s));
      node->ctx.saved_.emplace_back(s, is_output && record);
    }
    node->ctx.to_save_.clear();
    if constexpr (std::is_same_v<Ret, Tensor>) return outs[0];
    else return outs;
  }
};

inline variable_list AutogradContext::get_saved_variables() const {
  variable_list out;
  auto owner = node_.lock();
  for (const SavedTensor& s : saved_) out.push_back(s.unpack(owner, "CppNode"));
  return out;
}

}  // namespace autograd
}  // namespace ember
