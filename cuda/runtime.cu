// The CUDA runtime entry points core/ uses (cuda/cuda.h). This part reports devices; the
// allocator, copies and kernels of the CUDA backend come with the CUDA issue, and until
// then making a CUDA tensor raises a clear error.
#include <cuda_runtime.h>

#include "ember/core/error.h"
#include "ember/cuda/cuda.h"

namespace ember::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

bool is_available() { return device_count() > 0; }

namespace {
[[noreturn]] void no_backend() {
  detail::throw_error("CUDA tensors are not supported by this build of ember yet: the CUDA backend "
                      "(allocator, copies, kernels) is not part of it");
}
}  // namespace

Allocator* allocator(int) { no_backend(); }
void copy(const Tensor&, const Tensor&) { no_backend(); }
void fill(const Tensor&, const Scalar&) { no_backend(); }

}  // namespace ember::cuda
