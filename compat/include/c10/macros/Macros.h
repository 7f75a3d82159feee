// <c10/macros/Macros.h> for ember: the portability macros libtorch programs use
// (C10_UNUSED, C10_LIKELY, C10_STRINGIZE, ...), spelled for GCC and Clang.
#pragma once

#include <ember/compat/namespaces.h>

#define C10_STRINGIZE_IMPL(x) #x
#define C10_STRINGIZE(x) C10_STRINGIZE_IMPL(x)
#define C10_CONCATENATE_IMPL(a, b) a##b
#define C10_CONCATENATE(a, b) C10_CONCATENATE_IMPL(a, b)
#define C10_UID __COUNTER__
#define C10_ANONYMOUS_VARIABLE(str) C10_CONCATENATE(str, __COUNTER__)
#define C10_UNUSED __attribute__((__unused__))
#define C10_NODISCARD [[nodiscard]]
#define C10_LIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 1))
#define C10_UNLIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 0))
#define C10_ALWAYS_INLINE inline __attribute__((__always_inline__))
#define C10_NOINLINE __attribute__((__noinline__))
