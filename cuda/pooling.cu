// Max pooling on CUDA: one thread per output scans its window (cuda/axis_tables.h's
// max_window), and the backward has one thread per input element gather the gradients of the
// outputs whose argmax it is (max_scatter_point): no atomics, deterministic for overlapping
// windows too, and added in the CPU's order.
#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "ember/core/ops/separable_map.h"
#include "ember/cuda/axis_tables.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/pooling.h"
#include "ember/cuda/separable_map.h"

namespace ember::cuda {

namespace {

__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <class T>
__global__ void max_pool_kernel(const device_t<T>* x, device_t<T>* y, int64_t* idx, int64_t planes,
                                AxisView h, AxisView w, opmath_t<T> lowest) {
  using M = opmath_t<T>;
  const int64_t per_out = h.out_size * w.out_size, per_in = h.in_size * w.in_size, n = planes * per_out;
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const int64_t p = i / per_out, r = i - p * per_out, oh = r / w.out_size, ow = r - oh * w.out_size;
    const device_t<T>* xp = x + p * per_in;
    const MaxHit<M> hit =
        max_window<M>(h, w, oh, ow, lowest, [xp](int64_t k) { return load_opmath<T>(xp + k); });
    y[i] = to_stored<T>(hit.value);
    idx[i] = hit.at;
  }
}

template <class T>
__global__ void max_scatter_kernel(const device_t<T>* g, const int64_t* idx, device_t<T>* y, int64_t planes,
                                   AxisView h, AxisView w, bool any_empty) {
  using M = opmath_t<T>;
  const int64_t per_out = h.out_size * w.out_size, per_in = h.in_size * w.in_size, n = planes * per_in;
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const int64_t p = i / per_in, r = i - p * per_in, ih = r / w.in_size, iw = r - ih * w.in_size;
    const device_t<T>* gp = g + p * per_out;
    const int64_t* ip = idx + p * per_out;
    const M v = max_scatter_point<M>(
        h, w, ih, iw, any_empty && r == 0, [gp](int64_t o) { return load_opmath<T>(gp + o); },
        [ip](int64_t o) { return ip[o]; },
        [](M a) {
          const device_t<T> stored = to_stored<T>(a);
          return load_opmath<T>(&stored);
        });
    y[i] = to_stored<T>(v);
  }
}

/// -inf, or the lowest value of a type without infinities: where a window's scan starts.
template <class M>
M scan_start() {
  return std::numeric_limits<M>::has_infinity ? -std::numeric_limits<M>::infinity()
                                              : std::numeric_limits<M>::lowest();
}

}  // namespace

void max_pool(const Tensor& x, const Tensor& values, const Tensor& indices, const resample::AxisMap& h,
              const resample::AxisMap& w) {
  EMBER_CHECK(
      x.is_contiguous() && values.is_contiguous() && indices.is_contiguous() && indices.dtype() == kLong,
      "internal error: CUDA max pooling takes contiguous tensors and int64 indices");
  if (values.numel() == 0) return;
  DeviceGuard guard(values.device());
  DeviceTables t = upload_tables(h, w, values.device());
  const int64_t planes = values.numel() / (h.out_size() * w.out_size());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ember::detail::throw_error("internal error: CUDA max pooling was called with a bool tensor");
    } else {
      max_pool_kernel<T><<<blocks_for(values.numel()), kThreads, 0, current_raw_stream()>>>(
          static_cast<const device_t<T>*>(x.data_ptr()), static_cast<device_t<T>*>(values.data_ptr()),
          indices.data_ptr<int64_t>(), planes, t.h, t.w, scan_start<opmath_t<T>>());
      EMBER_CUDA_CHECK_LAUNCH();
    }
  });
}

void max_pool_scatter(const Tensor& grad, const Tensor& indices, const Tensor& out,
                      const resample::AxisMap& h, const resample::AxisMap& w) {
  EMBER_CHECK(grad.is_contiguous() && indices.is_contiguous() && out.is_contiguous() &&
                  indices.dtype() == kLong && grad.sizes().equals(indices.sizes()),
              "internal error: CUDA max pooling's backward takes contiguous tensors and int64 indices");
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  DeviceTables t = upload_tables(h, w, out.device());
  const int64_t planes = out.numel() / (h.in_size * w.in_size);
  visit_float_dtype(grad.dtype(), "max_pool2d_with_indices_backward", [&]<typename T>() {
    max_scatter_kernel<T><<<blocks_for(out.numel()), kThreads, 0, current_raw_stream()>>>(
        static_cast<const device_t<T>*>(grad.data_ptr()), indices.data_ptr<int64_t>(),
        static_cast<device_t<T>*>(out.data_ptr()), planes, t.h, t.w, t.any_empty);
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ember::cuda
