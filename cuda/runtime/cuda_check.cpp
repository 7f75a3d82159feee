// The check after every kernel launch, and EMBER_CUDA_SYNC_CHECK=1, the mode that pins a
// kernel fault to the launch that caused it.
#include "ember/cuda/runtime/cuda_check.h"

#include <cstdlib>
#include <cstring>

namespace ember::cuda::detail {

// Note [Pinning a fault to its kernel]
// Kernels run asynchronously: an illegal address in one surfaces at some later CUDA call,
// usually another op's, and from then on every call in the process fails with the same sticky
// error. EMBER_CUDA_SYNC_CHECK=1 synchronizes the device after each launch of ember's own
// kernels, so the first failing check is the faulting kernel's: the error names the
// function that launched it (__PRETTY_FUNCTION__, whose template arguments are the element
// types) and the line. It costs a full device round trip per launch: for finding faults
// (the GPU check reruns failing test files with it and CUDA_LAUNCH_BLOCKING=1), not for speed.
bool sync_check_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("EMBER_CUDA_SYNC_CHECK");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return enabled;
}

void check_launch(const char* launcher, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    ember::detail::throw_error(ember::detail::str_cat("CUDA error: ", cudaGetErrorString(err),
                                                      " (kernel launch in ", launcher, " at ", file, ":", line, ")"));
  }
  if (!sync_check_enabled()) return;
  err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error (a sticky one stays whatever is done here)
    ember::detail::throw_error(ember::detail::str_cat("CUDA error: ", cudaGetErrorString(err),
                                                      " (EMBER_CUDA_SYNC_CHECK: in the kernel launched by ", launcher,
                                                      " at ", file, ":", line, ")"));
  }
}

}  // namespace ember::cuda::detail
