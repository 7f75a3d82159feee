// arange and linspace fills (cuda/creation.h): value i is a function of i alone, computed in
// the same double (or int64) arithmetic as the CPU loop, without fused multiply-adds, so the
// two devices give the same bits.
#include "ember/core/tensor.h"
#include "ember/cuda/creation.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda {
namespace {

/// out[i] = f(i) for a contiguous output of n elements, stored as T.
template <class T, class F>
__global__ void index_fill_kernel(int64_t n, device_t<T>* out, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = to_stored<T>(f(i));
}

template <class T, class F>
void launch_index_fill(const Tensor& out, const F& f) {
  const int64_t n = out.numel();
  if (n == 0) return;
  EMBER_CHECK(out.is_cuda() && out.is_contiguous(), "internal error: index fills need a contiguous CUDA output");
  index_fill_kernel<T><<<blocks_for(n), kThreads, 0, current_raw_stream()>>>(
      n, static_cast<device_t<T>*>(out.data_ptr()), f);
  EMBER_CUDA_CHECK_LAUNCH();
}

struct IntRangeFn {
  int64_t start, step;
  __device__ int64_t operator()(int64_t i) const { return start + i * step; }
};

struct FloatRangeFn {
  double start, step;
  __device__ double operator()(int64_t i) const { return __dadd_rn(start, __dmul_rn(static_cast<double>(i), step)); }
};

/// The CPU's symmetric linspace: exact at both ends.
struct LinspaceFn {
  double start, end, step;
  int64_t n;
  __device__ double operator()(int64_t i) const {
    return i < n / 2 ? __dadd_rn(start, __dmul_rn(step, static_cast<double>(i)))
                     : __dsub_rn(end, __dmul_rn(step, static_cast<double>(n - 1 - i)));
  }
};

}  // namespace

void arange(const Tensor& out, int64_t istart, int64_t istep, double start, double step) {
  DeviceGuard guard(out.device());
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) ember::detail::throw_error("\"arange_cuda\" not implemented for 'Bool'");
    else if constexpr (std::is_integral_v<T>) launch_index_fill<T>(out, IntRangeFn{istart, istep});
    else launch_index_fill<T>(out, FloatRangeFn{start, step});
  });
}

void linspace(const Tensor& out, double start, double end, double step) {
  DeviceGuard guard(out.device());
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) ember::detail::throw_error("\"linspace_cuda\" not implemented for 'Bool'");
    else launch_index_fill<T>(out, LinspaceFn{start, end, step, out.numel()});
  });
}

}  // namespace ember::cuda
