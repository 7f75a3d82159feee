// AnyModule and AnyValue, as libtorch's: AnyModule holds a module of any type and calls its
// forward() with type-erased arguments (AnyValue), so Sequential can chain modules whose forward
// takes or returns something other than one Tensor. Arguments must have exactly the forward
// parameters' types (after decay), as libtorch requires; a module whose forward has default
// arguments declares them with FORWARD_HAS_DEFAULT_ARGS so callers may leave them out:
//
//   struct MImpl : torch::nn::Module {
//     torch::Tensor forward(torch::Tensor x, int64_t k = 2, torch::Tensor mask = {});
//    protected:
//     FORWARD_HAS_DEFAULT_ARGS({1, torch::nn::AnyValue(int64_t{2})}, {2, torch::nn::AnyValue(torch::Tensor())})
//   };
//   torch::nn::AnyModule any(M{});   any.forward(x);   any.forward<torch::Tensor>(x, int64_t{3});
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"

namespace ember::nn {

namespace detail {
/// The readable name of a C++ type ("at::Tensor" spelled as ember's: "ember::Tensor").
std::string demangle(const char* mangled);
}  // namespace detail

/// A value of any (copyable) type, as libtorch's AnyValue.
class AnyValue {
 public:
  template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, AnyValue>>>
  explicit AnyValue(T&& value) : value_(std::in_place_type<std::decay_t<T>>, std::forward<T>(value)) {}
  AnyValue(const AnyValue&) = default;
  AnyValue(AnyValue&&) noexcept = default;
  AnyValue& operator=(const AnyValue&) = default;
  AnyValue& operator=(AnyValue&&) noexcept = default;

  /// The value if it is a T, else nullptr.
  template <class T>
  T* try_get() {
    return std::any_cast<T>(&value_);
  }
  template <class T>
  const T* try_get() const {
    return std::any_cast<T>(&value_);
  }
  /// The value as a T; another type is libtorch's error naming both.
  template <class T>
  T get() const {
    if (const T* v = try_get<T>()) return *v;
    EMBER_CHECK(false, "Attempted to cast AnyValue to ", detail::demangle(typeid(T).name()),
                ", but its actual type is ", detail::demangle(type_info().name()));
    throw;  // unreachable
  }
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

/// Declares a module's forward() default arguments for AnyModule and Sequential (libtorch's
/// macro): pairs {index of the first defaulted parameter, AnyValue(default)}, ... in order.
#define FORWARD_HAS_DEFAULT_ARGS(...)                                                               \
 public:                                                                                           \
  static constexpr bool ember_forward_has_default_args = true;                                     \
  static std::vector<std::pair<unsigned int, ::ember::nn::AnyValue>> ember_forward_default_args() { \
    return {__VA_ARGS__};                                                                          \
  }

namespace detail {

/// The parameter list of a forward member function pointer.
template <class F>
struct ForwardSignature;
template <class R, class C, class... P>
struct ForwardSignature<R (C::*)(P...)> {
  using Return = R;
  static constexpr size_t arity = sizeof...(P);
  template <template <class...> class T>
  using Apply = T<R, P...>;
};
template <class R, class C, class... P>
struct ForwardSignature<R (C::*)(P...) const> : ForwardSignature<R (C::*)(P...)> {};

/// Argument `index` as the parameter's decayed type; another type is libtorch's error.
template <class T>
std::decay_t<T>& argument(std::vector<AnyValue>& arguments, size_t index) {
  using D = std::decay_t<T>;
  if (D* v = arguments[index].template try_get<D>()) return *v;
  EMBER_CHECK(false, "Expected argument #", index, " to be of type ", demangle(typeid(D).name()),
              ", but received value of type ", demangle(arguments[index].type_info().name()));
  throw;  // unreachable
}

/// Checks the argument count against forward()'s and fills in declared defaults.
template <class ModuleType>
void complete_arguments(const Module& module, std::vector<AnyValue>& arguments, size_t arity) {
  if constexpr (requires { ModuleType::ember_forward_has_default_args; }) {
    auto defaults = ModuleType::ember_forward_default_args();
    size_t required = defaults.empty() ? arity : defaults.front().first;
    EMBER_CHECK(arguments.size() >= required && arguments.size() <= arity, module.name(),
                "'s forward() method expects at least ", required, " argument(s) and at most ", arity,
                " argument(s), but received ", arguments.size(), ".");
    for (auto& [index, value] : defaults)
      if (index >= arguments.size()) arguments.push_back(std::move(value));
  } else {
    EMBER_CHECK(arguments.size() == arity, module.name(), "'s forward() method expects ", arity,
                " argument(s), but received ", arguments.size(), ".",
                arguments.size() < arity ? " If " + module.name() +
                                               "'s forward() method has default arguments, please make sure the "
                                               "forward() method is declared with a corresponding "
                                               "`FORWARD_HAS_DEFAULT_ARGS` macro."
                                         : std::string());
  }
}

template <class ModuleType, class R, class... P>
struct Invoker {
  template <size_t... I>
  static AnyValue call(ModuleType& m, std::vector<AnyValue>& args, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      m.forward(std::forward<P>(argument<P>(args, I))...);
      return AnyValue(std::monostate{});
    } else {
      return AnyValue(m.forward(std::forward<P>(argument<P>(args, I))...));
    }
  }
  static AnyValue run(ModuleType& m, std::vector<AnyValue>&& args) {
    complete_arguments<ModuleType>(m, args, sizeof...(P));
    return call(m, args, std::index_sequence_for<P...>{});
  }
};
template <class ModuleType>
struct BindInvoker {
  template <class R, class... P>
  using type = Invoker<ModuleType, R, P...>;
};

}  // namespace detail

/// A module of any type, called through type-erased arguments (libtorch's AnyModule). Remembers
/// the concrete type so it can be cloned.
class AnyModule {
 public:
  AnyModule() = default;
  template <class ModuleType, class = std::enable_if_t<std::is_base_of_v<Module, ModuleType>>>
  explicit AnyModule(std::shared_ptr<ModuleType> module) : module_(module) {
    forward_ = make_forward(module.get());
    clone_ = [](const Module& self, const std::optional<Device>& device) {
      return AnyModule(std::dynamic_pointer_cast<ModuleType>(self.clone(device)));
    };
  }
  template <class ModuleType, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<ModuleType>>>>
  explicit AnyModule(ModuleType&& module)
      : AnyModule(std::make_shared<std::decay_t<ModuleType>>(std::forward<ModuleType>(module))) {}
  template <class ModuleType>
  explicit AnyModule(const ModuleHolder<ModuleType>& holder) : AnyModule(holder.ptr()) {}

  /// Calls forward() with the arguments, returning its result as an AnyValue.
  template <class... ArgumentTypes>
  AnyValue any_forward(ArgumentTypes&&... arguments) const {
    EMBER_CHECK(!is_empty(), "Cannot call forward() on an empty AnyModule");
    std::vector<AnyValue> values;
    values.reserve(sizeof...(ArgumentTypes));
    (values.emplace_back(std::forward<ArgumentTypes>(arguments)), ...);
    return forward_(std::move(values));
  }
  /// Calls forward() and returns its result as ReturnType (a Tensor unless named).
  template <class ReturnType = Tensor, class... ArgumentTypes>
  ReturnType forward(ArgumentTypes&&... arguments) const {
    return any_forward(std::forward<ArgumentTypes>(arguments)...).template get<ReturnType>();
  }

  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    EMBER_CHECK(!is_empty(), "Cannot call clone() on an empty AnyModule");
    return clone_(*module_, device);
  }
  /// The module as its base class.
  const std::shared_ptr<Module>& ptr() const { return module_; }
  /// The module as its concrete type; a wrong type is an error.
  template <class T, class = std::enable_if_t<std::is_base_of_v<Module, T>>>
  std::shared_ptr<T> ptr() const {
    auto p = std::dynamic_pointer_cast<T>(module_);
    EMBER_CHECK(p != nullptr, "Attempted to cast module of type ", module_->name(), " to a different type");
    return p;
  }
  template <class T, class = std::enable_if_t<std::is_base_of_v<Module, T>>>
  T& get() const {
    return *ptr<T>();
  }
  const std::type_info& type_info() const {
    EMBER_CHECK(!is_empty(), "Cannot call type_info() on an empty AnyModule");
    const Module& module = *module_;
    return typeid(module);
  }
  bool is_empty() const noexcept { return module_ == nullptr; }

 private:
  using Forward = std::function<AnyValue(std::vector<AnyValue>&&)>;

  /// The type-erased call of m->forward: through its signature when forward is one
  /// non-template member function; otherwise (an overloaded or template forward, such as
  /// Sequential's) as Tensor -> Tensor when that call compiles. A module without a usable
  /// forward (ModuleList) may still be held, for printing and state; calling it is an error.
  template <class ModuleType>
  static Forward make_forward(ModuleType* m) {
    if constexpr (requires { &ModuleType::forward; }) {
      using Signature = detail::ForwardSignature<decltype(&ModuleType::forward)>;
      using Invoker = typename Signature::template Apply<detail::BindInvoker<ModuleType>::template type>;
      return [m](std::vector<AnyValue>&& args) { return Invoker::run(*m, std::move(args)); };
    } else if constexpr (requires(ModuleType& mod, const Tensor& x) {
                           { mod.forward(x) } -> std::convertible_to<Tensor>;
                         }) {
      return [m](std::vector<AnyValue>&& args) {
        EMBER_CHECK(args.size() == 1, m->name(), "'s forward() method expects 1 argument(s), but received ",
                    args.size(), ".");
        return AnyValue(Tensor(m->forward(detail::argument<const Tensor&>(args, 0))));
      };
    } else {
      return [m](std::vector<AnyValue>&&) -> AnyValue {
        EMBER_CHECK(false, "the module ", m->name(), " has no forward() that AnyModule can call");
        throw;  // unreachable
      };
    }
  }

  std::shared_ptr<Module> module_;
  Forward forward_;
  std::function<AnyModule(const Module&, const std::optional<Device>&)> clone_;
};

}  // namespace ember::nn
