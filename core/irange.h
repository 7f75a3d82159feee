// ember::irange: a range of integers for range-based for loops, as c10::irange:
// `for (int64_t i : ember::irange(n))` is [0, n), `irange(begin, end)` is [begin, end);
// an end before the begin gives an empty range rather than a long walk.
#pragma once

#include <cstddef>
#include <iterator>
#include <type_traits>

namespace ember {

/// [begin, end) of an integer type, iterated by value.
template <class I>
class IntegerRange {
  static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool>, "irange needs an integer type");

 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = I;
    using difference_type = std::ptrdiff_t;
    using pointer = const I*;
    using reference = I;

    constexpr iterator() = default;
    constexpr explicit iterator(I v) : v_(v) {}
    constexpr I operator*() const { return v_; }
    constexpr iterator& operator++() {
      ++v_;
      return *this;
    }
    constexpr iterator operator++(int) {
      iterator before = *this;
      ++v_;
      return before;
    }
    constexpr bool operator==(const iterator& o) const { return v_ == o.v_; }
    constexpr bool operator!=(const iterator& o) const { return v_ != o.v_; }

   private:
    I v_ = 0;
  };

  constexpr IntegerRange(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  constexpr iterator begin() const { return iterator(begin_); }
  constexpr iterator end() const { return iterator(end_); }
  constexpr bool empty() const { return begin_ == end_; }

 private:
  I begin_, end_;
};

/// [0, end): `for (auto i : irange(t.dim()))`.
template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
constexpr IntegerRange<I> irange(I end) {
  return IntegerRange<I>(I(0), end);
}

/// [begin, end), in end's type as c10::irange does (`irange(0, t.size(0))` is int64_t).
template <class B, class E, std::enable_if_t<std::is_integral_v<B> && std::is_integral_v<E>, int> = 0>
constexpr IntegerRange<E> irange(B begin, E end) {
  return IntegerRange<E>(static_cast<E>(begin), end);
}

}  // namespace ember
