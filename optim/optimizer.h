// Optimizer: the base of ember's optimizers, shaped as libtorch's torch::optim::Optimizer
// (parameter groups with per-group options, per-parameter state keyed by the parameter's
// TensorImpl), plus a flat, tensor-only state dict so optimizers checkpoint as safetensors.
#pragma once

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/archive.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember::guts {
/// libtorch's c10::guts::to_string: the value as operator<< prints it; libtorch's optimizers key
/// their state by to_string(p.unsafeGetTensorImpl()) (see ParamStateKey).
template <class T>
std::string to_string(T value) {
  std::ostringstream s;
  s << value;
  return s.str();
}
}  // namespace ember::guts

namespace ember::optim {

// Note [Optimizer state dict]
// PyTorch's optimizer state dict is a nested dict {"state": {index: {name: value}},
// "param_groups": [{option: value, "params": [index, ...]}]}. safetensors holds only tensors,
// so ember flattens it into an OrderedDict<std::string, Tensor>:
//   "state.<i>.<name>"          the tensors of parameter i (i counts parameters across all
//                               groups in order, as PyTorch does): e.g. "state.0.exp_avg";
//                               "state.<i>.step" is a 0-dim float32 tensor, as PyTorch 1.13
//                               keeps it. Parameters without state (never stepped) have none.
//   "param_groups.<g>.<option>" each option of group g as a 0-dim float64 tensor, named as in
//                               PyTorch: "lr", "momentum", "eps", "weight_decay"; a tuple
//                               option is split ("betas.0", "betas.1"); booleans are 0 or 1.
//                               "initial_lr" appears once an LR scheduler has set it.
//   "param_groups.<g>.params"   an int64 tensor of the group's parameter indices.
// state_dict() returns copies (a snapshot later steps do not change); load_state_dict()
// copies in, casting floating state to the parameter's dtype (except "step"), so stepping on
// after a round trip gives bit-identical results.

/// Options shared by a parameter group (libtorch's OptimizerOptions).
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const;
  virtual double get_lr() const;
  virtual void set_lr(double lr);
  /// The options as named numbers in PyTorch's param_group key order (see the Note above).
  virtual std::vector<std::pair<std::string, double>> named_values() const;
  /// Sets one option from its named_values() name; an unknown name is an error.
  virtual void set_named_value(const std::string& name, double value);
  /// Writes the options to an archive (libtorch's serialize): each named value as a number.
  virtual void serialize(serialize::OutputArchive& archive) const;
  /// Reads options serialize(OutputArchive&) wrote.
  virtual void serialize(serialize::InputArchive& archive);
};

/// Gives an options class its clone() (libtorch's OptimizerCloneableOptions).
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

/// Per-parameter state (momentum buffers, moment estimates), libtorch's OptimizerParamState.
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const;
  /// The defined state tensors by PyTorch's names ("step" as a 0-dim float32 tensor).
  virtual std::vector<std::pair<std::string, Tensor>> named_tensors() const;
  /// Sets one entry of named_tensors() from a loaded tensor; an unknown name is an error.
  virtual void set_named_tensor(const std::string& name, const Tensor& value);
  /// Writes the state to an archive (libtorch's serialize): the named tensors.
  virtual void serialize(serialize::OutputArchive& archive) const;
  /// Reads a state serialize(OutputArchive&) wrote.
  virtual void serialize(serialize::InputArchive& archive);
};

template <class Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

/// The key of a parameter's state: the parameter's TensorImpl, given as the pointer
/// (`state_[p.unsafeGetTensorImpl()]`) or as libtorch's string of it
/// (`state_[c10::guts::to_string(p.unsafeGetTensorImpl())]`, "0x..."), so optimizers written
/// for either spelling find the same entry.
class ParamStateKey {
 public:
  ParamStateKey(const void* impl) : impl_(impl) {}  // NOLINT: implicit, as a map key
  ParamStateKey(const std::string& key);           // NOLINT: parses libtorch's "0x..." string
  ParamStateKey(const char* key) : ParamStateKey(std::string(key)) {}  // NOLINT
  const void* get() const noexcept { return impl_; }
  /// libtorch's string form of the key.
  std::string str() const;
  friend bool operator==(const ParamStateKey& a, const ParamStateKey& b) { return a.impl_ == b.impl_; }

 private:
  const void* impl_;
};

struct ParamStateKeyHash {
  size_t operator()(const ParamStateKey& k) const noexcept { return std::hash<const void*>()(k.get()); }
};

/// Per-parameter optimizer state (libtorch's state() map).
using ParamStateMap = std::unordered_map<ParamStateKey, std::unique_ptr<OptimizerParamState>, ParamStateKeyHash>;

/// Parameters optimised with one set of options; without options a group takes the
/// optimizer's defaults when added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options = nullptr)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) noexcept = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) noexcept = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

  /// The lr an LR scheduler started from (PyTorch's group["initial_lr"]); unset until a
  /// scheduler is attached.
  bool has_initial_lr() const { return has_initial_lr_; }
  double initial_lr() const;
  void set_initial_lr(double lr) {
    initial_lr_ = lr;
    has_initial_lr_ = true;
  }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  double initial_lr_ = 0.0;
  bool has_initial_lr_ = false;
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults);
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = default;
  virtual ~Optimizer() = default;

  /// One update of every parameter that has a gradient. `closure`, when given, is run with
  /// grad mode on to recompute the loss, which step returns.
  virtual Tensor step(LossClosure closure = nullptr) = 0;

  /// Adds a group; parameters must be leaves and in no other group.
  void add_param_group(const OptimizerParamGroup& param_group);
  /// Adds parameters to the first group (libtorch's add_parameters).
  void add_parameters(const std::vector<Tensor>& parameters);
  /// Clears every parameter's gradient: resets it (set_to_none) or zeroes it in place.
  void zero_grad(bool set_to_none = true);

  /// The parameters of the first group (as libtorch).
  const std::vector<Tensor>& parameters() const noexcept;
  std::vector<Tensor>& parameters() noexcept;
  /// The number of parameters over all groups.
  size_t size() const noexcept;
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  /// Per-parameter state keyed by param.unsafeGetTensorImpl() (as libtorch; ParamStateKey).
  ParamStateMap& state() noexcept { return state_; }
  const ParamStateMap& state() const noexcept {
    return state_;
  }

  /// A snapshot of groups and state in the flat format of Note [Optimizer state dict].
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Restores a state_dict() from an optimizer of the same type over the same parameter shapes.
  void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict);
  /// Writes state_dict() into an archive (libtorch's Optimizer::save; the keys of Note
  /// [Optimizer state dict]).
  virtual void save(serialize::OutputArchive& archive) const;
  /// Restores what save() wrote (load_state_dict of the archive's entries).
  virtual void load(serialize::InputArchive& archive);

 protected:
  /// An empty state of this optimizer's kind, which load_state_dict fills.
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const;
  /// Runs the closure (if any) with grad mode on; step() implementations start with it.
  static Tensor run_closure(const LossClosure& closure);

  std::vector<OptimizerParamGroup> param_groups_;
  ParamStateMap state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

namespace detail {
/// The one value of a 0-dim state-dict entry; a missing key names the dict and the key.
double dict_value(const OrderedDict<std::string, Tensor>& dict, const std::string& key, const char* what);
/// A 0-dim float64 (or int64 when `integral`) tensor holding v.
Tensor dict_scalar(double v, bool integral = false);
/// A 0-dim float32 tensor holding the step count, as PyTorch 1.13 stores "step".
Tensor step_tensor(int64_t step);
}  // namespace detail

}  // namespace ember::optim
