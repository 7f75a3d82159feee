// Scalar: a number of unknown C++ type (bool, integer or floating), as c10::Scalar.
// Used for tensor-scalar ops and fill values; it takes no part in type promotion's
// precision (a double scalar times a float tensor stays float).
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/core/half.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { i_ = v; }  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) { i_ = static_cast<int64_t>(v); }  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double) { d_ = static_cast<double>(v); }  // NOLINT
  Scalar(Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT

  bool isBoolean() const { return kind_ == Kind::Bool; }
  bool isIntegral(bool include_bool) const {
    return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool);
  }
  bool isFloatingPoint() const { return kind_ == Kind::Double; }
  Kind kind() const { return kind_; }

  double toDouble() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  int64_t toLong() const { return kind_ == Kind::Double ? static_cast<int64_t>(d_) : i_; }
  bool toBool() const { return kind_ == Kind::Double ? d_ != 0 : i_ != 0; }
  float toFloat() const { return static_cast<float>(toDouble()); }
  int toInt() const { return static_cast<int>(toLong()); }

  /// The value converted to T (`s.to<float>()`).
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return toBool();
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(toLong());
    else return static_cast<T>(toDouble());
  }

  Scalar operator-() const;

 private:
  Kind kind_;
  union { int64_t i_; double d_; };
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
