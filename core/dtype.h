// ScalarType (dtype), its libtorch constants, and visit_dtype: the one place that turns a
// run-time dtype into a C++ type. Kernels are templates; visit_dtype picks the instance.
#pragma once

#include <complex>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/core/error.h"
#include "ember/core/half.h"

namespace ember {

enum class ScalarType : int8_t {
  Bool, Byte, Char, Short, Int, Long, Half, BFloat16, Float, Double, Undefined
};
using Dtype = ScalarType;

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kInt16 = ScalarType::Short;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat64 = ScalarType::Double;
constexpr ScalarType kDouble = ScalarType::Double;

size_t element_size(ScalarType t);
/// PyTorch's Python name, e.g. "torch.float32".
const char* dtype_name(ScalarType t);
/// The C++ type name libtorch uses in messages, e.g. "Float" (c10::toString).
const char* scalar_type_name(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);
/// The C++ type name of c10's TypeMeta ("float", "long int", "c10::Half"), which PyTorch
/// prints in some dtype mismatch messages.
const char* type_meta_name(ScalarType t);

constexpr bool is_floating_point(ScalarType t) {
  return t == kHalf || t == kBFloat16 || t == kFloat || t == kDouble;
}
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (include_bool && t == kBool) || t == kByte || t == kChar || t == kShort ||
         t == kInt || t == kLong;
}
inline bool isFloatingType(ScalarType t) { return is_floating_point(t); }
inline bool isIntegralType(ScalarType t, bool include_bool) { return is_integral(t, include_bool); }

template <class T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = kBool; };
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = kByte; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = kChar; };
template <> struct CppTypeToScalarType<int16_t> { static constexpr ScalarType value = kShort; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = kInt; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = kLong; };
template <> struct CppTypeToScalarType<Half> { static constexpr ScalarType value = kHalf; };
template <> struct CppTypeToScalarType<BFloat16> { static constexpr ScalarType value = kBFloat16; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = kFloat; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = kDouble; };
template <class T> constexpr ScalarType dtype_of = CppTypeToScalarType<T>::value;

/// The type kernels compute in: float for the 16-bit floats, the type itself otherwise.
template <class T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <class T> using opmath_t = typename OpMath<T>::type;

/// The type reductions accumulate in (PyTorch accumulates floats in double on CPU sums
/// only for some ops; ember always does, which also makes results thread-count independent).
template <class T> struct AccType { using type = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>; };
template <> struct AccType<Half> { using type = double; };
template <> struct AccType<BFloat16> { using type = double; };
template <> struct AccType<bool> { using type = int64_t; };
template <class T> using acc_t = typename AccType<T>::type;

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                            std::is_same_v<T, BFloat16>;

/// Calls f.template operator()<T>() with T the C++ type of `t`:
///   visit_dtype(x.dtype(), [&]<typename T>() { ... });
template <class F>
decltype(auto) visit_dtype(ScalarType t, F&& f) {
  switch (t) {
    case kBool: return f.template operator()<bool>();
    case kByte: return f.template operator()<uint8_t>();
    case kChar: return f.template operator()<int8_t>();
    case kShort: return f.template operator()<int16_t>();
    case kInt: return f.template operator()<int32_t>();
    case kLong: return f.template operator()<int64_t>();
    case kHalf: return f.template operator()<Half>();
    case kBFloat16: return f.template operator()<BFloat16>();
    case kFloat: return f.template operator()<float>();
    case kDouble: return f.template operator()<double>();
    default: break;
  }
  detail::throw_error("visit_dtype: undefined dtype");
}

/// visit_dtype restricted to floating types; other dtypes raise "<op>" not implemented for '<T>'.
template <class F>
decltype(auto) visit_float_dtype(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case kHalf: return f.template operator()<Half>();
    case kBFloat16: return f.template operator()<BFloat16>();
    case kFloat: return f.template operator()<float>();
    case kDouble: return f.template operator()<double>();
    default: break;
  }
  detail::throw_error(detail::str_cat("\"", op, "\" not implemented for '", scalar_type_name(t), "'"));
}

}  // namespace ember
