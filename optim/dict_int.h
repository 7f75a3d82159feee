// Reading a whole number (an epoch, a step count, an interval) from a state dict: its tensors
// come from files and may hold any float, and converting NaN or a value beyond int64 to an
// integer is undefined behaviour, so those are errors instead. Internal to optim/.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "ember/core/error.h"
#include "ember/optim/optimizer.h"

namespace ember::optim::detail {

/// dict[key] as an int64; an error naming the key when it is not a whole number in range.
inline int64_t dict_int(const OrderedDict<std::string, Tensor>& dict, const std::string& key,
                        const char* what) {
  const double v = dict_value(dict, key, what);
  EMBER_CHECK(std::isfinite(v) && v == std::trunc(v) && v >= -0x1p63 && v < 0x1p63,
              "expected a whole number for '", key, "' in ", what, ", got ", v);
  return static_cast<int64_t>(v);
}

}  // namespace ember::optim::detail
