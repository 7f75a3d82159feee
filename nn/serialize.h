// Saving and loading a module's parameters and buffers, in libtorch's spelling:
// ember::save(model, "model.safetensors"); ember::load(model, "model.safetensors").
// The file is safetensors holding the module's state_dict() under PyTorch's keys
// ("features.0.weight", "bn1.running_mean"), so PyTorch loads it with
// model.load_state_dict(safetensors.torch.load_file(path)) and the other way round.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "ember/core/serialize.h"
#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"

namespace ember {

/// Writes module.state_dict() to `path` atomically (metadata {"format": "pt"}, which
/// Hugging Face tooling expects of PyTorch weights).
void save(const nn::Module& module, const std::string& path);
/// Reads `path` and copies it into the module with load_state_dict(dict, strict): with
/// strict, missing or unexpected keys are an error; shapes must match either way.
void load(nn::Module& module, const std::string& path, bool strict = true);

template <class M, class = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  EMBER_CHECK(module != nullptr, "save: the module pointer is null");
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M>
void save(const nn::ModuleHolder<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M, class = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
void load(const std::shared_ptr<M>& module, const std::string& path, bool strict = true) {
  EMBER_CHECK(module != nullptr, "load: the module pointer is null");
  load(static_cast<nn::Module&>(*module), path, strict);
}
template <class M>
void load(nn::ModuleHolder<M>& module, const std::string& path, bool strict = true) {
  load(static_cast<nn::Module&>(*module), path, strict);
}

}  // namespace ember
