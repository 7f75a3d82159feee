// ParameterList and ParameterDict (libtorch's torch/nn/modules/container/parameterlist.h and
// parameterdict.h): modules whose only content is parameters, kept in the module's own
// parameter dict, so named_parameters(), state_dict(), to() and optimizers see them as they
// see any layer's ("0", "1", ... for a list; the user's keys for a dict).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/module_holder.h"

namespace ember {
namespace nn {

/// A list of parameters, registered under their positions. A tensor that requires grad is
/// registered as one that does; one that does not stays frozen (libtorch's rule).
class ParameterListImpl : public Cloneable<ParameterListImpl> {
 public:
  using Item = OrderedDict<std::string, Tensor>::Item;
  using Iterator = OrderedDict<std::string, Tensor>::iterator;
  using ConstIterator = OrderedDict<std::string, Tensor>::const_iterator;

  ParameterListImpl() = default;
  template <class... Tensors>
    requires(sizeof...(Tensors) > 0 && (std::is_convertible_v<Tensors, Tensor> && ...))
  explicit ParameterListImpl(Tensors&&... params) {
    (append(Tensor(std::forward<Tensors>(params))), ...);
  }

  /// Parameters are the whole content: a clone copies them (there is nothing to reset()).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;

  void append(const Tensor& param);
  void append(const Item& item) { append(item.value()); }
  /// Appends every tensor (or dict item) of another container.
  template <class Container>
  void extend(const Container& container) {
    for (const auto& param : container) append(param);
  }
  template <class Container>
  ParameterListImpl& operator+=(const Container& other) {
    extend(other);
    return *this;
  }

  Iterator begin() { return parameters_.begin(); }
  Iterator end() { return parameters_.end(); }
  ConstIterator begin() const { return parameters_.begin(); }
  ConstIterator end() const { return parameters_.end(); }

  /// The idx-th parameter; out of range is an error ("Index out of range").
  Tensor& at(size_t idx);
  const Tensor& at(size_t idx) const;
  Tensor& operator[](size_t idx) { return at(idx); }
  const Tensor& operator[](size_t idx) const { return at(idx); }

  size_t size() const noexcept { return parameters_.size(); }
  bool is_empty() const noexcept { return parameters_.is_empty(); }
};
EMBER_MODULE(ParameterList);

/// Parameters by name, in insertion order.
class ParameterDictImpl : public Cloneable<ParameterDictImpl> {
 public:
  using Iterator = OrderedDict<std::string, Tensor>::iterator;
  using ConstIterator = OrderedDict<std::string, Tensor>::const_iterator;

  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params);

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;

  /// Registers `param` under `key` (requires_grad as the tensor has it); an existing key is an
  /// error, as register_parameter's.
  Tensor& insert(const std::string& key, const Tensor& param);
  /// Removes `key` and returns its tensor.
  Tensor pop(const std::string& key);
  /// Sets each item's key to its value, adding the keys not present (Python's dict.update; libtorch
  /// 1.13's update only assigns existing keys and raises on a new one).
  template <class Container>
  void update(const Container& container) {
    for (const auto& item : container) set(item.key(), item.value());
  }
  void clear() { parameters_.clear(); }

  std::vector<std::string> keys() const { return parameters_.keys(); }
  std::vector<Tensor> values() const { return parameters_.values(); }
  bool contains(const std::string& key) const noexcept { return parameters_.contains(key); }

  Iterator begin() { return parameters_.begin(); }
  Iterator end() { return parameters_.end(); }
  ConstIterator begin() const { return parameters_.begin(); }
  ConstIterator end() const { return parameters_.end(); }

  /// The parameter under `key`; a missing key is an error ("Parameter 'x' is not defined").
  Tensor& get(const std::string& key) { return parameters_[key]; }
  const Tensor& get(const std::string& key) const { return parameters_[key]; }
  Tensor& operator[](const std::string& key) { return parameters_[key]; }
  const Tensor& operator[](const std::string& key) const { return parameters_[key]; }

  size_t size() const noexcept { return parameters_.size(); }
  bool empty() const noexcept { return parameters_.is_empty(); }

 private:
  void set(const std::string& key, const Tensor& param);
};
EMBER_MODULE(ParameterDict);

}  // namespace nn
}  // namespace ember
