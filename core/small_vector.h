// DimVector: sizes and strides of a tensor. Up to kInline dims live inside the object,
// so making a tensor of ordinary rank does not allocate for its shape (per-op overhead).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <type_traits>

#include "ember/core/array_ref.h"

namespace ember {

class DimVector {
 public:
  static constexpr size_t kInline = 6;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t v = 0) { assign(n, v); }
  DimVector(IntArrayRef a) { assign(a.begin(), a.end()); }  // NOLINT
  DimVector(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  DimVector(const DimVector& o) { assign(o.begin(), o.end()); }
  DimVector(DimVector&& o) noexcept { take(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) { heap_.reset(); size_ = 0; cap_ = kInline; take(o); }
    return *this;
  }

  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& back() { return data()[size_ - 1]; }
  int64_t back() const { return data()[size_ - 1]; }
  operator IntArrayRef() const { return IntArrayRef(data(), size_); }  // NOLINT
  IntArrayRef ref() const { return *this; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  void reserve(size_t n) {
    if (n <= cap_) return;
    auto mem = std::make_unique<int64_t[]>(n);
    // An indexed loop, not std::copy: GCC 12 -O3 misreads the inline buffer's bounds there
    // (a false -Warray-bounds that -Werror would turn into a build failure).
    const int64_t* src = data();
    for (size_t i = 0; i < size_; ++i) mem[i] = src[i];
    heap_ = std::move(mem);
    cap_ = n;
  }
  void resize(size_t n, int64_t v = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    std::copy_backward(begin() + pos, end() - 1, end());
    data()[pos] = v;
  }
  void erase(size_t pos) {
    std::copy(begin() + pos + 1, end(), begin() + pos);
    --size_;
  }
  void clear() { size_ = 0; }
  void assign(size_t n, int64_t v) { size_ = 0; resize(n, v); }
  template <class It>
    requires(!std::is_integral_v<It>)  // assign(3, 2) means three 2s, as std::vector's
  void assign(It first, It last) {
    size_ = 0;
    reserve(static_cast<size_t>(last - first));
    for (; first != last; ++first) data()[size_++] = *first;
  }

  bool operator==(const DimVector& o) const { return ref().equals(o.ref()); }
  bool operator!=(const DimVector& o) const { return !(*this == o); }

 private:
  void take(DimVector& o) {
    if (o.heap_) { heap_ = std::move(o.heap_); cap_ = o.cap_; size_ = o.size_; }
    else { assign(o.begin(), o.end()); }
    o.size_ = 0; o.cap_ = kInline;
  }
  int64_t inline_[kInline] = {};
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
  size_t cap_ = kInline;
};

}  // namespace ember
