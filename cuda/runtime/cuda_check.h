// Error checking for CUDA runtime calls inside cuda/ (internal; includes the CUDA runtime).
// EMBER_CUDA_CHECK(cudaMemcpyAsync(...)) turns a failed call into ember::Error with CUDA's
// own text; EMBER_CUDA_CHECK_LAUNCH() does the same for the kernel launched just before it.
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

namespace ember::cuda::detail {
/// Whether EMBER_CUDA_SYNC_CHECK=1 was set when the first kernel was launched.
bool sync_check_enabled();
/// The check after a kernel launch (EMBER_CUDA_CHECK_LAUNCH): raises the launch's own error;
/// under EMBER_CUDA_SYNC_CHECK=1 it also waits for the kernel and raises what it faulted with,
/// naming the launching function (with its template arguments: the dtypes) and the line.
void check_launch(const char* launcher, const char* file, int line);
}  // namespace ember::cuda::detail

namespace ember::cuda {
/// Raises the error of the kernel launch just made, if any (bad configuration, no image); with
/// EMBER_CUDA_SYNC_CHECK=1, also a fault of the kernel itself, pinned to this launch (Note
/// [Pinning a fault to its kernel] in cuda/runtime/cuda_check.cpp).
#define EMBER_CUDA_CHECK_LAUNCH() ::ember::cuda::detail::check_launch(__PRETTY_FUNCTION__, __FILE__, __LINE__)

/// The calling thread's current stream on the current device, as cudaStream_t.
cudaStream_t current_raw_stream();
}  // namespace ember::cuda
