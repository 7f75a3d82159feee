// cuda/rnn.h in a CUDA build configured without cuDNN (-DEMBER_CUDNN=OFF; CMakeLists.txt
// compiles this file instead of cuda/rnn.cpp). The recurrent layers then take their composed
// path on CUDA (nn/modules/rnn.cpp asks cudnn_rnn_available first), so only a direct call of
// _cudnn_rnn reaches these.
#include "ember/core/error.h"
#include "ember/cuda/rnn.h"

namespace ember::cuda {
namespace {
[[noreturn]] void no_cudnn() {
  detail::throw_error("_cudnn_rnn: ATen not compiled with cuDNN support (ember was built with -DEMBER_CUDNN=OFF)");
}
}  // namespace

bool cudnn_rnn_available() { return false; }
RnnSpaces rnn_spaces(const RnnShape&, ScalarType, int64_t, int64_t, bool) { no_cudnn(); }
void rnn_forward(const RnnShape&, const Tensor&, const Tensor&, const Tensor&, const TensorList&, const Tensor&,
                 const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  no_cudnn();
}
void rnn_backward(const RnnShape&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&) {
  no_cudnn();
}
std::vector<RnnCopy> rnn_weight_copies(const RnnShape&, ScalarType) { no_cudnn(); }

}  // namespace ember::cuda
