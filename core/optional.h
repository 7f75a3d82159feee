// ember::optional / nullopt: std::optional under the names libtorch code spells
// (torch::optional, c10::optional, c10::nullopt), so those spellings reach std's types.
#pragma once

#include <optional>

namespace ember {
using std::make_optional;
using std::nullopt;
using std::nullopt_t;
using std::optional;
}  // namespace ember
