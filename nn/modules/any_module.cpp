// AnyModule's error texts name C++ types as libtorch's do (demangled).
#include "ember/nn/modules/any_module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace ember::nn::detail {

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

}  // namespace ember::nn::detail
