// cuBLAS handles and errors, internal to cuda/ (includes cuBLAS): blas_handle() gives the
// calling thread's handle for the current device, bound to the current stream, and
// EMBER_CUBLAS_CHECK turns a failed cuBLAS call into ember::Error with PyTorch's wording.
#pragma once

#include <cublas_v2.h>

#include "ember/core/error.h"

namespace ember::cuda {

/// The calling thread's cuBLAS handle for the current device (created on first use, PyTorch's
/// one handle per device and thread), set to run on the current stream with a workspace of
/// its own for that stream taken from ember's caching allocator (Note [cuBLAS workspaces] in
/// blas_handle.cpp). Call it for each product: the current stream may have changed since.
cublasHandle_t blas_handle();

namespace detail {
[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* what) {
  ember::detail::throw_error(
      ember::detail::str_cat("CUDA error: ", cublasGetStatusName(status), " when calling `", what, "`"));
}
}  // namespace detail

}  // namespace ember::cuda

#define EMBER_CUBLAS_CHECK(expr)                                              \
  do {                                                                        \
    cublasStatus_t ember_cublas_status_ = (expr);                             \
    if (ember_cublas_status_ != CUBLAS_STATUS_SUCCESS)                        \
      ::ember::cuda::detail::throw_cublas_error(ember_cublas_status_, #expr); \
  } while (0)
