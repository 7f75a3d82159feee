// Which dtypes an elementwise formula (a functor of core/ops/*_math.h) has a kernel for, and
// the one dtype visit that the CPU loops and the CUDA kernels both use to honour it: a dtype
// outside the domain raises PyTorch's "<op>" not implemented for '<Type>' and instantiates
// nothing.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/core/dtype.h"
#include "ember/core/error.h"

namespace ember {

/// A functor says which with a member `static constexpr MapDomain kDomain`.
enum class MapDomain : uint8_t {
  kFloating,  // float16, bfloat16, float32, float64
  kNumbers,   // every dtype but bool
  kAll,
  kIntegral,  // bool and the integer dtypes (the bitwise ops)
  kBool,      // bool alone (the logical ops, whose operands are cast to bool first)
};

/// Calls f.template operator()<T>() with T the C++ type of t when t is in domain D; otherwise
/// raises "<op>" not implemented for '<Type>'.
template <MapDomain D, class F>
void visit_domain(ScalarType t, const char* op, F&& f) {
  if constexpr (D == MapDomain::kFloating) {
    visit_float_dtype(t, op, f);
  } else {
    visit_dtype(t, [&]<typename T>() {
      constexpr bool is_bool = std::is_same_v<T, bool>;
      constexpr bool in_domain = D == MapDomain::kAll || (D == MapDomain::kNumbers && !is_bool) ||
                                 (D == MapDomain::kIntegral && std::is_integral_v<T>) ||
                                 (D == MapDomain::kBool && is_bool);
      if constexpr (in_domain)
        f.template operator()<T>();
      else
        detail::throw_error(detail::str_cat("\"", op, "\" not implemented for '", scalar_type_name(t), "'"));
    });
  }
}

/// visit_domain's check alone, for a path that dispatches elsewhere.
template <MapDomain D>
void check_domain(ScalarType t, const char* op) {
  visit_domain<D>(t, op, []<typename>() {});
}

}  // namespace ember
