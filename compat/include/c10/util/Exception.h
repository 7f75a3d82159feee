// <c10/util/Exception.h> for ember: c10::Error is ember::Error, and the checking macros libtorch
// programs call (TORCH_CHECK, TORCH_INTERNAL_ASSERT, AT_ASSERT, AT_ERROR, TORCH_WARN, ...)
// raise it with libtorch's message text.
//
// What differs from libtorch: e.what() is the message alone, without libtorch's
// "Exception raised from ..." line and backtrace (ember::Error is PyTorch's Python-side text);
// TORCH_CHECK_INDEX / _VALUE / _TYPE / _NOT_IMPLEMENTED raise ember::Error (catch it as
// c10::Error), as ember has no IndexError/ValueError/TypeError classes; TORCH_WARN prints
// every time, to stderr, in libtorch's "[W file:line] Warning: ..." form.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include <c10/macros/Macros.h>
#include <c10/util/StringUtil.h>
#include <ember/compat/namespaces.h>
#include <ember/core/error.h>

namespace ember::torch_compat {

/// TORCH_CHECK's message: its arguments streamed together, or libtorch's default text when
/// there are none.
template <class... Args>
std::string check_message(const char* default_text, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return default_text;
  } else {
    return str(args...);
  }
}

/// TORCH_INTERNAL_ASSERT's error: `<cond> INTERNAL ASSERT FAILED at "<file>":<line>`, then
/// libtorch's request for a bug report, then the user's message.
[[noreturn]] inline void internal_assert_fail(const char* what_and_where, const std::string& message) {
  detail::throw_error(std::string(what_and_where) + ", please report a bug to PyTorch. " + message);
}

/// Prints a TORCH_WARN line as libtorch's default warning handler does (without glog).
inline void warn(const char* function, const char* file, int line, const std::string& message) {
  const char* slash = std::strrchr(file, '/');
  std::fprintf(stderr, "[W %s:%d] Warning: %s (function %s)\n", slash ? slash + 1 : file, line,
               message.c_str(), function);
}

}  // namespace ember::torch_compat

// libtorch's text for a TORCH_CHECK without a message, two spaces after each full stop included.
#define EMBER_COMPAT_CHECK_DEFAULT(cond)                                         \
  "Expected " #cond                                                              \
  " to be true, but got false.  (Could this error message be improved?  If so, " \
  "please report an enhancement request to PyTorch.)"

/// Raises c10::Error (ember::Error) when `cond` is false; the message is the remaining
/// arguments streamed together: TORCH_CHECK(x.dim() == 2, "expected 2-D, got ", x.dim()).
#define TORCH_CHECK(cond, ...)                                                                            \
  do {                                                                                                    \
    if (!(cond)) [[unlikely]]                                                                             \
      ::ember::detail::throw_error(::ember::torch_compat::check_message(EMBER_COMPAT_CHECK_DEFAULT(cond)  \
                                                                            __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

#define TORCH_CHECK_INDEX(cond, ...) TORCH_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) TORCH_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) TORCH_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) TORCH_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_ARG(cond, argN, ...) TORCH_CHECK(cond, "invalid argument ", argN, ": ", __VA_ARGS__)

/// An internal invariant: raises c10::Error whose message names the condition and the place,
/// as libtorch's does: `x > 0 INTERNAL ASSERT FAILED at "main.cpp":12, please report a bug
/// to PyTorch. ` followed by the streamed arguments.
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                           \
  do {                                                                                             \
    if (!(cond)) [[unlikely]]                                                                      \
      ::ember::torch_compat::internal_assert_fail(                                                 \
          #cond " INTERNAL ASSERT FAILED at " C10_STRINGIZE(__FILE__) ":" C10_STRINGIZE(__LINE__), \
          ::ember::str(__VA_ARGS__));                                                              \
  } while (0)

#ifdef NDEBUG
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(...) \
  while (false) TORCH_INTERNAL_ASSERT(__VA_ARGS__)
#else
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(...) TORCH_INTERNAL_ASSERT(__VA_ARGS__)
#endif

// libtorch's deprecated spellings, kept because older programs still use them.
#define AT_ASSERT(...) TORCH_INTERNAL_ASSERT(__VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_ERROR(...) TORCH_CHECK(false, ::ember::str(__VA_ARGS__))

/// Prints "[W file:line] Warning: <streamed arguments> (function f)" to stderr.
#define TORCH_WARN(...) ::ember::torch_compat::warn(__func__, __FILE__, __LINE__, ::ember::str(__VA_ARGS__))

/// TORCH_WARN, the first time this line runs only.
#define TORCH_WARN_ONCE(...)                                         \
  do {                                                               \
    static ::std::atomic<bool> ember_warned_once_{false};            \
    if (!ember_warned_once_.exchange(true)) TORCH_WARN(__VA_ARGS__); \
  } while (0)
