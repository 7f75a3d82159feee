// OrderedDict: a map that remembers insertion order, as libtorch's torch::OrderedDict.
// Modules return their parameters, buffers and children in one; state dicts are one. Order
// matters: it is the order PyTorch writes keys in and the order optimizers see parameters.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/error.h"

namespace ember {

template <class Key, class Value>
class OrderedDict {
 public:
  /// One key-value pair; iteration yields these in insertion order.
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const { return pair_.first; }
    Value& value() { return pair_.second; }
    const Value& value() const { return pair_.second; }
    Value& operator*() { return value(); }
    const Value& operator*() const { return value(); }
    Value* operator->() { return &value(); }
    const Value* operator->() const { return &value(); }
    const std::pair<Key, Value>& pair() const { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };

  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  /// `key_description` names keys in error messages ("Parameter 'w' already defined").
  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
    for (const Item& item : items) insert(item.key(), item.value());
  }

  const std::string& key_description() const { return key_description_; }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool contains(const Key& key) const { return index_.count(key) != 0; }

  Item& front() {
    EMBER_CHECK(!items_.empty(), "Called front() on an empty OrderedDict");
    return items_.front();
  }
  Item& back() {
    EMBER_CHECK(!items_.empty(), "Called back() on an empty OrderedDict");
    return items_.back();
  }

  /// The item at a position in insertion order.
  Item& operator[](size_t index) {
    EMBER_CHECK(index < items_.size(), "Index ", index, " is out of bounds");
    return items_[index];
  }
  const Item& operator[](size_t index) const {
    EMBER_CHECK(index < items_.size(), "Index ", index, " is out of bounds");
    return items_[index];
  }

  /// The value for a key; a missing key is an error naming it.
  Value& operator[](const Key& key) {
    Value* v = find(key);
    EMBER_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const {
    const Value* v = find(key);
    EMBER_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }

  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }

  /// Appends a new key; inserting a key twice is an error (as libtorch).
  Value& insert(Key key, Value value) {
    EMBER_CHECK(index_.count(key) == 0, key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }

  /// Inserts or overwrites every item of `other`, keeping this dict's order for known keys.
  void update(const OrderedDict& other) {
    for (const Item& item : other) {
      if (Value* v = find(item.key())) *v = item.value();
      else insert(item.key(), item.value());
    }
  }

  /// Removes a key (linear: dicts here are small and removal is rare).
  void erase(const Key& key) {
    auto it = index_.find(key);
    EMBER_CHECK(it != index_.end(), key_description_, " '", key, "' is not defined");
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].key(), i);
  }

  void clear() {
    items_.clear();
    index_.clear();
  }

  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.value());
    return out;
  }
  const std::vector<Item>& items() const { return items_; }

 private:
  std::string key_description_;
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace ember
