// ember::Error and EMBER_CHECK: the one way ember reports misuse.
// Messages follow PyTorch's wording so users recognise them.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

/// The single exception type ember throws for bad input or misuse.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}
[[noreturn]] void throw_error(const std::string& msg);
}  // namespace detail

}  // namespace ember

/// Throws ember::Error with the streamed message parts when `cond` is false.
#define EMBER_CHECK(cond, ...)                                              \
  do {                                                                      \
    if (!(cond)) [[unlikely]]                                               \
      ::ember::detail::throw_error(::ember::detail::str_cat(__VA_ARGS__)); \
  } while (0)
