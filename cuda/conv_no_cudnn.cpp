// cuda/conv.h in a CUDA build configured without cuDNN (-DEMBER_CUDNN=OFF; CMakeLists.txt
// compiles this file instead of cuda/conv.cpp and cuda/runtime/cudnn_handle.cpp). ember's only CUDA
// convolution is cuDNN's, so every call says how to get it.
#include "ember/core/error.h"
#include "ember/cuda/conv.h"
#include "ember/cuda/runtime/versions.h"

namespace ember::cuda {
namespace {
[[noreturn]] void no_cudnn() {
  detail::throw_error(
      "convolution on CUDA needs cuDNN, but ember was built without it (-DEMBER_CUDNN=OFF): reconfigure with "
      "cuDNN installed (CUDNN_ROOT, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY_DIR), or convolve on the CPU");
}
}  // namespace

void conv_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const ConvArgs2d&) { no_cudnn(); }
void conv_transpose(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const ConvArgs2d&) { no_cudnn(); }
void conv_backward_weight(const Tensor&, const Tensor&, const Tensor&, const ConvArgs2d&) { no_cudnn(); }

std::string cudnn_built_version() { return "not built (-DEMBER_CUDNN=OFF)"; }
std::string cudnn_loaded_version() { return "not built (-DEMBER_CUDNN=OFF)"; }

}  // namespace ember::cuda
