// <c10/util/StringUtil.h> for ember: c10::str(args...), the arguments streamed into one string
// with operator<< (what TORCH_CHECK's message parts go through).
#pragma once

#include <string>

#include <ember/compat/namespaces.h>
#include <ember/core/error.h>

namespace ember {

/// c10::str: "x = " and 3 give "x = 3". Always a std::string (libtorch's returns a const char*
/// for one C string; both convert to std::string where one is wanted).
template <class... Args>
std::string str(const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return std::string();
  } else {
    return detail::str_cat(args...);
  }
}

}  // namespace ember
