// ArrayRef / IntArrayRef: a non-owning view of a contiguous array, as c10::ArrayRef, so that
// `zeros({2, 3})`, `view(std::vector<int64_t>{...})` and `view(sizes)` all bind to one signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "ember/core/error.h"

namespace ember {

template <class T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // Like c10::ArrayRef, this views the list for the duration of the call it is passed to.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr ArrayRef(std::initializer_list<T> l)  // NOLINT
      : data_(l.size() ? l.begin() : nullptr), size_(l.size()) {}
#pragma GCC diagnostic pop
  template <class Container,
            class = decltype(std::declval<const Container&>().data() +
                             std::declval<const Container&>().size()),
            class = std::enable_if_t<std::is_same_v<
                std::remove_const_t<std::remove_pointer_t<decltype(std::declval<const Container&>().data())>>,
                T>>>
  ArrayRef(const Container& c) : data_(c.data()), size_(c.size()) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    EMBER_CHECK(i < size_, "ArrayRef: index ", i, " out of range for size ", size_);
    return data_[i];
  }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }
  ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (!(data_[i] == o.data_[i])) return false;
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

template <class T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) { return a.equals(b); }
template <class T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) { return !a.equals(b); }

using IntArrayRef = ArrayRef<int64_t>;

/// Prints as PyTorch prints sizes: [2, 3].
template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

}  // namespace ember
