// Sequential, ModuleList and ModuleDict: bookkeeping of children and Python-style printing.
#include "ember/nn/modules/container.h"

#include <algorithm>

namespace ember {
namespace nn {

// ---- Sequential -----------------------------------------------------------------------

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules) {
  modules_.reserve(named_modules.size());
  for (const auto& named : named_modules) push_back_any(named.name(), named.module());
}

SequentialImpl::SequentialImpl(const OrderedDict<std::string, AnyModule>& ordered_dict) {
  modules_.reserve(ordered_dict.size());
  for (const auto& item : ordered_dict) push_back_any(item.key(), item.value());
}

std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  // children_ and modules_ are parallel: same modules, same order.
  for (size_t i = 0; i < modules_.size(); ++i) copy->push_back_any(children_[i].key(), modules_[i].clone(device));
  copy->train(is_training());
  return copy;
}

void SequentialImpl::pretty_print(std::ostream& stream) const { stream << "Sequential"; }

void SequentialImpl::push_back_any(std::string name, AnyModule module) {
  EMBER_CHECK(!module.is_empty(), "Sequential: cannot add an empty module");
  register_module(std::move(name), module.ptr());
  modules_.push_back(std::move(module));
}

void SequentialImpl::check_index(size_t index) const {
  EMBER_CHECK(index < size(), "Index out of range (expected at most ", size() == 0 ? 0 : size() - 1,
              ", got ", index, ")");
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t index) const {
  check_index(index);
  return modules_[index].ptr();
}

// ---- ModuleList -----------------------------------------------------------------------

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& module : modules_) copy->push_back(module->clone(device));
  copy->train(is_training());
  return copy;
}

void ModuleListImpl::pretty_print(std::ostream& stream) const { stream << "ModuleList"; }

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, "ModuleList: cannot add an empty module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  EMBER_CHECK(index <= modules_.size(), "Index out of range");
  if (index == modules_.size()) return push_back(std::move(module));
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  // Children are keyed by position, so rebuild the names.
  children_.clear();
  for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  EMBER_CHECK(index < modules_.size(), "Index out of range");
  return modules_[index];
}

// ---- ModuleDict -----------------------------------------------------------------------

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  update(modules);
}

ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules) { update(modules); }

ModuleDictImpl::ModuleDictImpl(std::initializer_list<ModuleDictItem> modules) {
  for (const auto& item : modules) insert(item.name, item.module);
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : children_) copy->insert(item.key(), item.value()->clone(device));
  copy->train(is_training());
  return copy;
}

void ModuleDictImpl::pretty_print(std::ostream& stream) const { stream << "ModuleDict"; }

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, "ModuleDict: cannot add an empty module");
  if (children_.contains(key)) replace_module(key, std::move(module));
  else register_module(key, std::move(module));
}

void ModuleDictImpl::update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, module] : modules) insert(key, module);
}

void ModuleDictImpl::update(std::initializer_list<ModuleDictItem> modules) {
  for (const auto& item : modules) insert(item.name, item.module);
}

void ModuleDictImpl::update(const OrderedDict<std::string, std::shared_ptr<Module>>& modules) {
  for (const auto& item : modules) insert(item.key(), item.value());
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  auto module = (*this)[key];
  children_.erase(key);
  return module;
}

void ModuleDictImpl::clear() { children_.clear(); }

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const auto* found = children_.find(key);
  EMBER_CHECK(found != nullptr, "Module '", key, "' is not defined");
  return *found;
}

}  // namespace nn
}  // namespace ember
