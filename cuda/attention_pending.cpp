// TEMPORARY: the fused attention CUDA kernels (cuda/attention.cu) are being written in another
// branch; until it merges, these definitions let the CUDA build link. Drop this file at merge.
#include "ember/cuda/attention.h"

#include "ember/core/error.h"

namespace ember::cuda {

bool sdpa_fused_supported(int64_t, int64_t, int) { return false; }
void sdpa_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, double, const Tensor&,
                  const Tensor&) {
  throw Error("fused attention CUDA kernels pending");
}
void sdpa_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, double,
                   const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  throw Error("fused attention CUDA kernels pending");
}

}  // namespace ember::cuda
