// nn::Module: the base of every layer, as libtorch's torch::nn::Module. A module owns named
// parameters, buffers and child modules (each in registration order, which is the order
// PyTorch writes state dict keys in and optimizers see parameters in), a training flag, and
// prints itself the way Python's repr does.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember {
namespace nn {

template <class Contained>
class ModuleHolder;

/// What load_state_dict found (Python's _IncompatibleKeys).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  using ModuleApplyFunction = std::function<void(Module&)>;
  using ConstModuleApplyFunction = std::function<void(const Module&)>;
  using NamedModuleApplyFunction = std::function<void(const std::string&, Module&)>;
  using ConstNamedModuleApplyFunction = std::function<void(const std::string&, const Module&)>;
  using ModulePointerApplyFunction = std::function<void(const std::shared_ptr<Module>&)>;
  using NamedModulePointerApplyFunction =
      std::function<void(const std::string&, const std::shared_ptr<Module>&)>;

  /// A module with an explicit name (printed by repr and used in error messages).
  explicit Module(std::string name);
  /// A module named after its class: "LinearImpl" in any namespace gives "Linear".
  Module();
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  Module(Module&&) noexcept = default;
  Module& operator=(Module&&) noexcept = default;
  virtual ~Module() = default;

  /// The class name shown by printing ("Linear", "Sequential", "Net").
  const std::string& name() const;

  /// A deep copy (parameters and buffers cloned, children cloned recursively). Only modules
  /// deriving from Cloneable<T> implement it; the base throws.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  // ---- traversal --------------------------------------------------------------------
  /// Calls fn on this module and then every descendant, depth first (pre-order).
  void apply(const ModuleApplyFunction& fn);
  void apply(const ConstModuleApplyFunction& fn) const;
  /// As apply, passing each module's dotted name ("features.0"); this module gets name_prefix.
  void apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix = std::string());
  void apply(const ConstNamedModuleApplyFunction& fn, const std::string& name_prefix = std::string()) const;
  void apply(const ModulePointerApplyFunction& fn) const;
  void apply(const NamedModulePointerApplyFunction& fn, const std::string& name_prefix = std::string()) const;

  /// Parameters of this module and (if recurse) every descendant; undefined ones are skipped.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// As parameters(), keyed by dotted path ("features.0.weight").
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  /// This module (if include_self) and all descendants, pre-order.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = std::string(),
                                                                  bool include_self = true) const;
  /// The direct children, in registration order.
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;

  // ---- state ------------------------------------------------------------------------
  /// Sets training mode on this module and every descendant.
  virtual void train(bool on = true);
  /// train(false).
  void eval();
  virtual bool is_training() const noexcept;

  /// Converts parameters and buffers in place: every Tensor handle (the module's members,
  /// an optimizer's list) keeps pointing at the same tensor, which now holds the new data.
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);

  /// Resets every parameter's gradient: to undefined (set_to_none) or to zeros.
  virtual void zero_grad(bool set_to_none = true);

  /// Parameters then buffers of each module, pre-order, keyed as Python's state_dict();
  /// values are detached tensors sharing storage with the module's.
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Copies values in (no grad, in place). strict: missing/unexpected keys are an error with
  /// PyTorch's message; shape mismatches are an error either way.
  IncompatibleKeys load_state_dict(const OrderedDict<std::string, Tensor>& state_dict, bool strict = true);

  /// This module cast to a concrete type, or nullptr (`m.as<Linear>()` or `m.as<LinearImpl>()`).
  template <class ModuleType>
  typename ModuleType::ContainedType* as() noexcept {
    return dynamic_cast<typename ModuleType::ContainedType*>(this);
  }
  template <class ModuleType>
  const typename ModuleType::ContainedType* as() const noexcept {
    return dynamic_cast<const typename ModuleType::ContainedType*>(this);
  }
  template <class ModuleType, class = std::enable_if_t<std::is_base_of_v<Module, ModuleType>>>
  ModuleType* as() noexcept {
    return dynamic_cast<ModuleType*>(this);
  }
  template <class ModuleType, class = std::enable_if_t<std::is_base_of_v<Module, ModuleType>>>
  const ModuleType* as() const noexcept {
    return dynamic_cast<const ModuleType*>(this);
  }

  /// Writes this module's one-line description, without children: "Linear(in_features=3,
  /// out_features=4, bias=True)". Default: the name (printed as "Name()" when childless).
  virtual void pretty_print(std::ostream& stream) const;
  /// Whether serialization should save this module (true for all built-in modules).
  virtual bool is_serializable() const;

  // ---- registration -----------------------------------------------------------------
  /// Adds a parameter (requires_grad set as given); returns a reference to the stored
  /// handle. An undefined tensor is allowed (e.g. an absent bias) and is skipped by
  /// parameters(). Registering a name twice is an error ("Parameter 'w' already defined").
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  /// Adds a buffer (state saved in state_dict but not trained, e.g. running_mean).
  Tensor& register_buffer(std::string name, Tensor tensor);

  template <class ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string name, std::shared_ptr<ModuleType> module) {
    check_submodule_name(name);
    auto& base = children_.insert(std::move(name), std::move(module));
    return std::dynamic_pointer_cast<ModuleType>(base);
  }
  template <class ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string name, ModuleHolder<ModuleType> module_holder) {
    return register_module(std::move(name), module_holder.ptr());
  }
  /// Swaps a registered child for another (the name must exist).
  template <class ModuleType>
  std::shared_ptr<ModuleType> replace_module(const std::string& name, std::shared_ptr<ModuleType> module) {
    auto& base = (children_[name] = std::move(module));
    return std::dynamic_pointer_cast<ModuleType>(base);
  }
  template <class ModuleType>
  std::shared_ptr<ModuleType> replace_module(const std::string& name, ModuleHolder<ModuleType> module_holder) {
    return replace_module(name, module_holder.ptr());
  }
  /// Removes a registered child.
  void unregister_module(const std::string& name);

 protected:
  /// Called by Cloneable::clone on the copy's children: overwrite this module with a clone
  /// of `other` in place, so holders pointing at this child see the clone.
  virtual void clone_(Module& other, const std::optional<Device>& device);

  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};

 private:
  template <class Derived>
  friend class Cloneable;
  friend std::ostream& operator<<(std::ostream& stream, const Module& module);

  static void check_submodule_name(const std::string& name);
  void pretty_print_recursive(std::ostream& stream, const std::string& indentation) const;
  void to_impl(std::optional<Device> device, std::optional<ScalarType> dtype, bool non_blocking);
  void collect_state(const std::string& prefix, OrderedDict<std::string, Tensor>& out) const;
  std::shared_ptr<Module> shared_from_this_checked() const;

  mutable std::optional<std::string> name_;
  bool is_training_ = true;
};

/// Prints the module tree exactly as Python's repr(module).
std::ostream& operator<<(std::ostream& stream, const Module& module);

/// Python's repr of a float, for pretty_print: shortest round-trip digits, ".0" on whole
/// numbers, exponent form outside [1e-4, 1e16): "0.01", "1.0", "1e-05", "inf", "nan".
std::string python_float(double v);

/// Joins a dotted path: join_name("features", "0") == "features.0"; an empty prefix is dropped.
std::string join_name(const std::string& prefix, const std::string& name);

}  // namespace nn
}  // namespace ember
