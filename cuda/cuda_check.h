// Error checking for CUDA runtime calls inside cuda/ (internal; includes the CUDA runtime).
// EMBER_CUDA_CHECK(cudaMemcpyAsync(...)) turns a failed call into ember::Error with CUDA's
// own text; check_launch() does the same for the kernel launched just before it.
#pragma once

#include <cuda_runtime.h>

#include "ember/core/error.h"

namespace ember::cuda::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call does not see it again
  ember::detail::throw_error(ember::detail::str_cat("CUDA error: ", cudaGetErrorString(err), " (", what,
                                                    " at ", file, ":", line, ")"));
}

}  // namespace ember::cuda::detail

#define EMBER_CUDA_CHECK(expr)                                                          \
  do {                                                                                  \
    cudaError_t ember_cuda_err_ = (expr);                                               \
    if (ember_cuda_err_ != cudaSuccess)                                                 \
      ::ember::cuda::detail::throw_cuda_error(ember_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

namespace ember::cuda {
/// Raises the error of the kernel launch just made, if any (bad configuration, no image).
#define EMBER_CUDA_CHECK_LAUNCH() EMBER_CUDA_CHECK(cudaGetLastError())

/// The calling thread's current stream on the current device, as cudaStream_t.
cudaStream_t current_raw_stream();
}  // namespace ember::cuda
