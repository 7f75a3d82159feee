// <torch/script.h> for ember: everything in <torch/torch.h>, and torch::jit::load, which ember
// cannot honour: a TorchScript file is a program for libtorch's TorchScript interpreter, which
// ember does not have. load() raises c10::Error (ember::Error) naming the way that works: the
// weights as safetensors, loaded with torch::load into the same model written in C++.
//
// The types a TorchScript program touches (torch::jit::script::Module, torch::jit::IValue) exist
// so that libtorch's tutorial program builds and reports that error at run time, from the
// load() it already wraps in try/catch; a Module cannot hold a program, and each of its
// methods raises the same error.
#pragma once

#include <istream>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace ember::jit {

namespace detail {
/// The one error of this header: what failed, why, and what to do instead.
[[noreturn]] inline void no_torchscript(const std::string& what) {
  ::ember::detail::throw_error(
      what +
      ": ember cannot run TorchScript programs (.pt files from torch.jit.script/trace/save need "
      "libtorch's TorchScript interpreter). Save the weights instead: in Python, "
      "safetensors.torch.save_file(model.state_dict(), \"model.safetensors\"); in C++, write the "
      "same model as a torch::nn::Module and call torch::load(model, \"model.safetensors\") "
      "(state-dict keys are PyTorch's). Loading torch.export .pt2 archives is planned.");
}
}  // namespace detail

/// A value passed to a TorchScript method; here, a tensor (what the tutorial passes).
class IValue {
 public:
  IValue() = default;
  IValue(Tensor t) : tensor_(std::move(t)) {}  // NOLINT: implicit, as libtorch's
  bool isTensor() const { return tensor_.defined(); }
  const Tensor& toTensor() const& { return tensor_; }
  Tensor toTensor() && { return std::move(tensor_); }

 private:
  Tensor tensor_;
};

/// torch::jit::Module: never holds a program in ember (see load()).
class Module {
 public:
  IValue forward(std::vector<IValue> /*inputs*/) { detail::no_torchscript("torch::jit::Module::forward"); }
  void eval() { detail::no_torchscript("torch::jit::Module::eval"); }
  void train(bool /*on*/ = true) { detail::no_torchscript("torch::jit::Module::train"); }
  void to(Device /*device*/, bool /*non_blocking*/ = false) {
    detail::no_torchscript("torch::jit::Module::to");
  }
};

namespace script {
using Module = jit::Module;
}  // namespace script

/// torch::jit::load: raises c10::Error (ember::Error), naming safetensors and torch::load.
inline Module load(const std::string& filename, optional<Device> /*device*/ = nullopt,
                   bool /*load_debug_files*/ = true) {
  detail::no_torchscript("torch::jit::load(\"" + filename + "\")");
}
inline Module load(std::istream& /*in*/, optional<Device> /*device*/ = nullopt,
                   bool /*load_debug_files*/ = true) {
  detail::no_torchscript("torch::jit::load(stream)");
}

}  // namespace ember::jit
