// Helpers the nn tests share: a module's printed form (pretty_print, as PyTorch's repr) and a
// state dict's keys in order.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::test {

inline std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

inline std::vector<std::string> keys_of(const OrderedDict<std::string, Tensor>& d) { return d.keys(); }

}  // namespace ember::test
