// ModuleHolder<Impl>: the value-like handle users hold (`Linear fc(3, 4); fc->weight; fc(x)`),
// a shared_ptr to the module implementation, as libtorch's ModuleHolder. EMBER_MODULE(Name)
// declares the holder class `Name` for `NameImpl` (libtorch's TORCH_MODULE).
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <type_traits>
#include <utility>

#include "ember/core/error.h"
#include "ember/nn/module.h"

namespace ember {
namespace nn {

namespace detail {
/// Marks holder types so templates can tell a holder from an Impl.
struct ModuleHolderIndicator {};

template <class T, class Contained>
inline constexpr bool is_module_holder_of_v =
    std::is_base_of_v<ModuleHolder<Contained>, std::decay_t<T>>;

template <class T>
inline constexpr bool is_module_holder_v = std::is_base_of_v<ModuleHolderIndicator, std::decay_t<T>>;
}  // namespace detail

template <class Contained>
class ModuleHolder : detail::ModuleHolderIndicator {
 protected:
  std::shared_ptr<Contained> impl_;

 public:
  using ContainedType = Contained;

  /// Default-constructs the module; modules without a default constructor must be given
  /// `nullptr` for the empty state (`Linear fc = nullptr;`).
  ModuleHolder() : impl_(default_construct()) {
    static_assert(std::is_default_constructible_v<Contained>,
                  "You are trying to default construct a module which has no default constructor. "
                  "Use = nullptr to give it the empty state (e.g. `Linear linear = nullptr;` "
                  "instead of `Linear linear;`).");
  }
  /// The empty holder.
  /*implicit*/ ModuleHolder(std::nullptr_t) : impl_(nullptr) {}

  /// Constructs the module from the given arguments (`Linear(3, 4)`, `Linear(LinearOptions(3, 4))`).
  template <class Head, class... Tail,
            class = std::enable_if_t<!(detail::is_module_holder_of_v<Head, Contained> && sizeof...(Tail) == 0)>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(new Contained(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  /// Wraps an existing module.
  /*implicit*/ ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}

  explicit operator bool() const noexcept { return !is_empty(); }

  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }

  const std::shared_ptr<Contained>& ptr() const {
    EMBER_CHECK(!is_empty(), "Accessing empty ModuleHolder");
    return impl_;
  }
  Contained* get() {
    EMBER_CHECK(!is_empty(), "Accessing empty ModuleHolder");
    return impl_.get();
  }
  const Contained* get() const {
    EMBER_CHECK(!is_empty(), "Accessing empty ModuleHolder");
    return impl_.get();
  }

  /// Calls the module's forward with these arguments.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    return get()->forward(std::forward<Args>(args)...);
  }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return const_cast<Contained*>(get())->forward(std::forward<Args>(args)...);
  }

  /// Forwards indexing to the module (`seq[0]`, `dict["fc"]`).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }

  bool is_empty() const noexcept { return impl_ == nullptr; }

 private:
  template <class T = Contained>
  static std::shared_ptr<Contained> default_construct() {
    if constexpr (std::is_default_constructible_v<T>) return std::make_shared<Contained>();
    else return nullptr;
  }
};

/// Prints the held module's tree.
template <class Contained>
std::ostream& operator<<(std::ostream& stream, const ModuleHolder<Contained>& module) {
  return stream << *module;
}

}  // namespace nn
}  // namespace ember

/// Declares holder class `Name` for implementation `ImplType` (libtorch's TORCH_MODULE_IMPL).
#define EMBER_MODULE_IMPL(Name, ImplType)                          \
  class Name : public ::ember::nn::ModuleHolder<ImplType> {        \
   public:                                                         \
    using ::ember::nn::ModuleHolder<ImplType>::ModuleHolder;       \
    using ::ember::nn::ModuleHolder<ImplType>::get;                \
  }

/// Declares holder class `Name` for `NameImpl` (libtorch's TORCH_MODULE).
#define EMBER_MODULE(Name) EMBER_MODULE_IMPL(Name, Name##Impl)

// libtorch's macro names, so a program written for libtorch builds unchanged after
// `namespace torch = ember;` (macros are not namespaced). Left alone if libtorch defined them.
#ifndef TORCH_MODULE_IMPL
#define TORCH_MODULE_IMPL(Name, ImplType) EMBER_MODULE_IMPL(Name, ImplType)
#endif
#ifndef TORCH_MODULE
#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#endif
