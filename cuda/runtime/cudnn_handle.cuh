// cuDNN handles and errors, internal to cuda/ (includes cuDNN): cudnn_handle() gives the calling
// thread's handle for the current device, bound to the current stream, and EMBER_CUDNN_CHECK
// turns a failed cuDNN call into ember::Error with cuDNN's own description of the failure;
// Descriptor owns one cuDNN descriptor.
#pragma once

#include <cudnn.h>

#include "ember/core/error.h"

namespace ember::cuda {

/// The calling thread's cuDNN handle for the current device (created on first use: one handle
/// per device and thread, as PyTorch's), set to run on the current stream. Call it for each
/// convolution: the current stream may have changed since. Workspaces are passed per call
/// (cuda/conv.cpp), so the handle holds none.
cudnnHandle_t cudnn_handle();

namespace detail {
[[noreturn]] inline void throw_cudnn_error(cudnnStatus_t status, const char* what) {
  ember::detail::throw_error(
      ember::detail::str_cat("cuDNN error: ", cudnnGetErrorString(status), " when calling `", what, "`"));
}
}  // namespace detail

}  // namespace ember::cuda

#define EMBER_CUDNN_CHECK(expr)                                             \
  do {                                                                      \
    cudnnStatus_t ember_cudnn_status_ = (expr);                             \
    if (ember_cudnn_status_ != CUDNN_STATUS_SUCCESS)                        \
      ::ember::cuda::detail::throw_cudnn_error(ember_cudnn_status_, #expr); \
  } while (0)

namespace ember::cuda {

/// Owns one cuDNN descriptor (created at construction, destroyed with the object); the
/// convolution (cuda/conv.cpp) and RNN (cuda/rnn.cpp) calls build theirs from it.
template <class T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class Descriptor {
 public:
  Descriptor() { EMBER_CUDNN_CHECK(Create(&desc_)); }
  ~Descriptor() { Destroy(desc_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  T get() const { return desc_; }

 private:
  T desc_ = nullptr;
};

using TensorDescriptor = Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;

}  // namespace ember::cuda
