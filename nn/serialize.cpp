// Module save/load through safetensors; see nn/serialize.h.
#include "ember/nn/serialize.h"

namespace ember {

void save(const nn::Module& module, const std::string& path) {
  save_file(module.state_dict(), path, {{"format", "pt"}});
}

void load(nn::Module& module, const std::string& path, bool strict) {
  module.load_state_dict(load_file(path), strict);
}

}  // namespace ember
