// The two building blocks of options classes (nn layers, optimizers, the DataLoader), as
// libtorch has them in torch/arg.h:
// EMBER_ARG declares an option with a chained setter (`Conv2dOptions(1, 32, 3).padding(1)`)
// and a getter, and ExpandingArray<D> lets one number stand for D of them (kernel_size 3
// means {3, 3} for a 2-d layer).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "ember/core/array_ref.h"
#include "ember/core/error.h"

/// Declares option `name` of type T: `opts.name(v)` sets it and returns the options (so
/// setters chain), `opts.name()` reads it. Default values go after the macro:
/// `EMBER_ARG(int64_t, stride) = 1;`
#define EMBER_ARG(T, name)                                      \
 public:                                                        \
  inline auto name(const T& new_##name)->decltype(*this) {      \
    this->name##_ = new_##name;                                 \
    return *this;                                               \
  }                                                             \
  inline auto name(T&& new_##name)->decltype(*this) {           \
    this->name##_ = std::move(new_##name);                      \
    return *this;                                               \
  }                                                             \
  inline const T& name() const noexcept { return this->name##_; } \
  inline T& name() noexcept { return this->name##_; }           \
                                                                \
 private:                                                       \
  T name##_

// libtorch's spelling, for option structs written against libtorch (macros have no namespace,
// so `namespace torch = ember;` cannot cover them).
#ifndef TORCH_ARG
#define TORCH_ARG(T, name) EMBER_ARG(T, name)
#endif

namespace ember {

/// D integers given either as D values or as one value repeated D times.
template <size_t D, class T = int64_t>
class ExpandingArray {
 public:
  /*implicit*/ ExpandingArray(T single) { values_.fill(single); }
  /*implicit*/ ExpandingArray(std::initializer_list<T> list) : ExpandingArray(std::vector<T>(list)) {}
  /*implicit*/ ExpandingArray(const std::vector<T>& list) {
    EMBER_CHECK(list.size() == D, "Expected ", D, " values, but instead got ", list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  /*implicit*/ ExpandingArray(const std::array<T, D>& values) : values_(values) {}

  T& operator[](size_t i) { return values_[i]; }
  const T& operator[](size_t i) const { return values_[i]; }
  T* data() { return values_.data(); }
  const T* data() const { return values_.data(); }
  static constexpr size_t size() { return D; }
  /// As an ArrayRef, the form core ops take (`conv2d(..., stride, ...)`).
  /*implicit*/ operator ArrayRef<T>() const { return ArrayRef<T>(values_.data(), D); }
  std::vector<T> vec() const { return std::vector<T>(values_.begin(), values_.end()); }
  bool operator==(const ExpandingArray& o) const { return values_ == o.values_; }

 private:
  std::array<T, D> values_;
};

/// Prints as PyTorch's module repr does: "(3, 3)", or "(3,)" for one value.
template <size_t D, class T>
std::ostream& operator<<(std::ostream& os, const ExpandingArray<D, T>& a) {
  os << "(";
  for (size_t i = 0; i < D; ++i) os << (i ? ", " : "") << a[i];
  return os << (D == 1 ? ",)" : ")");
}

}  // namespace ember
