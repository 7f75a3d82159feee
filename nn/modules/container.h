// Containers of modules, as libtorch's: Sequential (chains forwards, each module's output the
// next one's input; children named "0", "1", ... or by the names given), ModuleList (an indexable
// list of children) and ModuleDict (children by name). Sequential stores AnyModules
// (nn/modules/any_module.h).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <concepts>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"

namespace ember {
namespace nn {

/// A name and a module, to build a Sequential with named children.
class NamedAnyModule {
 public:
  template <class ModuleType>
  NamedAnyModule(std::string name, std::shared_ptr<ModuleType> module)
      : name_(std::move(name)), module_(std::move(module)) {}
  template <class ModuleType>
  NamedAnyModule(std::string name, const ModuleHolder<ModuleType>& holder)
      : name_(std::move(name)), module_(holder.ptr()) {}
  template <class ModuleType, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<ModuleType>>>>
  NamedAnyModule(std::string name, ModuleType&& module)
      : name_(std::move(name)), module_(std::forward<ModuleType>(module)) {}
  NamedAnyModule(std::string name, AnyModule module) : name_(std::move(name)), module_(std::move(module)) {}

  const std::string& name() const noexcept { return name_; }
  const AnyModule& module() const noexcept { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

/// Runs its modules in order, each one's output feeding the next.
class SequentialImpl : public Cloneable<SequentialImpl> {
 public:
  using Iterator = std::vector<AnyModule>::iterator;
  using ConstIterator = std::vector<AnyModule>::const_iterator;

  SequentialImpl() = default;
  /// From modules or holders: `Sequential(Linear(3, 4), ReLU())`.
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && !(std::is_same_v<std::decay_t<Modules>, SequentialImpl> || ...))
  explicit SequentialImpl(Modules&&... modules) {
    modules_.reserve(sizeof...(Modules));
    (push_back(std::forward<Modules>(modules)), ...);
  }
  /// From named modules: `Sequential({{"fc", Linear(3, 4)}, {"act", ReLU()}})`.
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules);
  explicit SequentialImpl(const OrderedDict<std::string, AnyModule>& ordered_dict);

  /// Clones every contained module (reset() has nothing to rebuild).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;

  /// Adds a module named by its position ("0", "1", ...).
  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <class M>
  void push_back(std::string name, M&& module) {
    if constexpr (std::is_same_v<std::decay_t<M>, AnyModule>) push_back_any(std::move(name), module);
    else push_back_any(std::move(name), AnyModule(std::forward<M>(module)));
  }
  /// Appends every module of another container.
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }

  /// Runs the inputs through the first module and each result through the next; the last
  /// result is returned as ReturnType (a Tensor unless named: `seq->forward<std::tuple<...>>(x)`).
  template <class ReturnType = Tensor, class... InputTypes>
  ReturnType forward(InputTypes&&... inputs) {
    EMBER_CHECK(!is_empty(), "Cannot call forward() on an empty Sequential");
    auto it = modules_.begin();
    AnyValue value = it->any_forward(std::forward<InputTypes>(inputs)...);
    for (++it; it != modules_.end(); ++it) value = it->any_forward(std::move(value));
    if (ReturnType* result = value.try_get<ReturnType>()) return std::move(*result);
    EMBER_CHECK(false, "The type of the return value is ", detail::demangle(value.type_info().name()),
                ", but you asked for type ", detail::demangle(typeid(ReturnType).name()));
    throw;  // unreachable
  }

  Iterator begin() { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator begin() const { return modules_.begin(); }
  ConstIterator end() const { return modules_.end(); }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  /// The module at index as its concrete type (`seq->at<LinearImpl>(0)`).
  template <class T>
  T& at(size_t index) {
    check_index(index);
    return modules_[index].get<T>();
  }
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    check_index(index);
    return modules_[index].ptr<T>();
  }
  std::shared_ptr<Module> ptr(size_t index) const;
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }

 private:
  void push_back_any(std::string name, AnyModule module);
  void check_index(size_t index) const;
  std::vector<AnyModule> modules_;
};
/// The holder; also constructible from a braced list of named modules.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using ModuleHolder<SequentialImpl>::get;
  Sequential() : ModuleHolder<SequentialImpl>() {}
  Sequential(std::initializer_list<NamedAnyModule> named_modules)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(named_modules)) {}
};

/// A list of child modules, named "0", "1", ...; it has no forward of its own.
class ModuleListImpl : public Cloneable<ModuleListImpl> {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
  using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleListImpl() = default;
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && !(std::is_same_v<std::decay_t<Modules>, ModuleListImpl> || ...))
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;

  void push_back(std::shared_ptr<Module> module);
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  void push_back(std::shared_ptr<M> module) {
    push_back(std::static_pointer_cast<Module>(std::move(module)));
  }
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void push_back(M&& module) {
    push_back(std::static_pointer_cast<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  /// Appends every module of another container.
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }
  /// Inserts before position index (renumbering the children after it).
  void insert(size_t index, std::shared_ptr<Module> module);
  template <class M>
  void insert(size_t index, const ModuleHolder<M>& holder) {
    insert(index, std::static_pointer_cast<Module>(holder.ptr()));
  }

  Iterator begin() { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator begin() const { return modules_.begin(); }
  ConstIterator end() const { return modules_.end(); }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  template <class T>
  T& at(size_t index) {
    return *ptr<T>(index);
  }
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    auto p = std::dynamic_pointer_cast<T>(ptr(index));
    EMBER_CHECK(p != nullptr, "Unable to cast module");
    return p;
  }
  std::shared_ptr<Module> ptr(size_t index) const;
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
EMBER_MODULE(ModuleList);

/// One (name, module) entry for building a ModuleDict from a braced list.
struct ModuleDictItem {
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  ModuleDictItem(std::string key, std::shared_ptr<M> m) : name(std::move(key)), module(std::move(m)) {}
  template <class M>
  ModuleDictItem(std::string key, const ModuleHolder<M>& holder) : name(std::move(key)), module(holder.ptr()) {}
  std::string name;
  std::shared_ptr<Module> module;
};

/// Child modules by name, in insertion order; it has no forward of its own.
class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  using Iterator = OrderedDict<std::string, std::shared_ptr<Module>>::iterator;
  using ConstIterator = OrderedDict<std::string, std::shared_ptr<Module>>::const_iterator;

  ModuleDictImpl() = default;
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);
  /// `ModuleDict({{"fc", Linear(3, 4)}, {"act", ReLU()}})`.
  ModuleDictImpl(std::initializer_list<ModuleDictItem> modules);

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;

  /// Adds (or, for a known key, replaces) the module under key.
  void insert(const std::string& key, std::shared_ptr<Module> module);
  template <class M>
  void insert(const std::string& key, const ModuleHolder<M>& holder) {
    insert(key, std::static_pointer_cast<Module>(holder.ptr()));
  }
  /// Adds or replaces every item of the given pairs / dict.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  void update(std::initializer_list<ModuleDictItem> modules);
  void update(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);
  /// Removes key and returns its module.
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();

  std::vector<std::string> keys() const { return children_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return children_.values(); }
  const std::vector<OrderedDict<std::string, std::shared_ptr<Module>>::Item>& items() const {
    return children_.items();
  }
  bool contains(const std::string& key) const { return children_.contains(key); }
  size_t size() const noexcept { return children_.size(); }
  bool empty() const noexcept { return children_.is_empty(); }

  ConstIterator begin() const { return children_.begin(); }
  ConstIterator end() const { return children_.end(); }

  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  T& at(const std::string& key) {
    auto p = std::dynamic_pointer_cast<T>((*this)[key]);
    EMBER_CHECK(p != nullptr, "Unable to cast module[", key, "] to ", typeid(T).name());
    return *p;
  }
};
/// The holder; also constructible from a braced list of (name, module) pairs.
class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  using ModuleHolder<ModuleDictImpl>::get;
  ModuleDict() : ModuleHolder<ModuleDictImpl>() {}
  ModuleDict(std::initializer_list<ModuleDictItem> modules)
      : ModuleHolder<ModuleDictImpl>(std::make_shared<ModuleDictImpl>(modules)) {}
};

}  // namespace nn
}  // namespace ember
