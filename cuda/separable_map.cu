// The separable maps on CUDA (Note [Separable maps] in core/ops/separable_map.h): one thread
// per output element (per input element for the adjoint) running cuda/axis_tables.h's
// per-element functions over tables uploaded once per call.
#include <cuda_runtime.h>

#include <type_traits>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/separable_map.h"
#include "ember/cuda/axis_tables.h"
#include "ember/cuda/binary_kernels.cuh"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/separable_map.h"

namespace ember::cuda {

namespace {

/// A host array copied to `device` through pinned memory, asynchronously on the current
/// stream (the pinned block is kept from reuse until the copy has run).
template <class V>
Tensor upload(const std::vector<V>& v, ScalarType dtype, Device device) {
  Tensor host =
      from_blob(const_cast<V*>(v.data()), {static_cast<int64_t>(v.size())}, TensorOptions().dtype(dtype));
  return host.pin_memory().to(device, /*non_blocking=*/true);
}

/// Grid-stride position of the calling thread and the stride.
__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// A gather moves bits, whatever the dtype: B is the unsigned integer of the element's size.
template <class B>
__global__ void gather_kernel(const B* x, B* y, int64_t planes, AxisView h, AxisView w) {
  const int64_t per_out = h.out_size * w.out_size, per_in = h.in_size * w.in_size, n = planes * per_out;
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const int64_t p = i / per_out, r = i - p * per_out, oh = r / w.out_size, ow = r - oh * w.out_size;
    y[i] = x[p * per_in + gather_offset(h, w, oh, ow)];
  }
}

template <class T>
__global__ void map_kernel(const device_t<T>* x, device_t<T>* y, int64_t planes, AxisView h, AxisView w) {
  using M = opmath_t<T>;
  const int64_t per_out = h.out_size * w.out_size, per_in = h.in_size * w.in_size, n = planes * per_out;
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const int64_t p = i / per_out, r = i - p * per_out, oh = r / w.out_size, ow = r - oh * w.out_size;
    const device_t<T>* xp = x + p * per_in;
    y[i] = to_stored<T>(map_point<M>(h, w, oh, ow, [xp](int64_t k) { return load_opmath<T>(xp + k); }));
  }
}

template <class T>
__global__ void adjoint_kernel(const device_t<T>* g, device_t<T>* y, int64_t planes, AxisView h, AxisView w) {
  using M = opmath_t<T>;
  const int64_t per_out = h.out_size * w.out_size, per_in = h.in_size * w.in_size, n = planes * per_in;
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const int64_t p = i / per_in, r = i - p * per_in, ih = r / w.in_size, iw = r - ih * w.in_size;
    const device_t<T>* gp = g + p * per_out;
    y[i] = to_stored<T>(adjoint_point<M>(h, w, ih, iw, [gp](int64_t k) { return load_opmath<T>(gp + k); }));
  }
}

/// The number of planes of t whose last two dims hold `per_plane` elements (t non-empty).
int64_t planes_of(const Tensor& t, int64_t per_plane) { return t.numel() / per_plane; }

void check_operands(const Tensor& x, const Tensor& out) {
  EMBER_CHECK(
      x.is_cuda() && out.is_cuda() && x.is_contiguous() && out.is_contiguous() && x.dtype() == out.dtype(),
      "internal error: the CUDA separable map takes contiguous CUDA tensors of one dtype");
}

}  // namespace

DeviceTables upload_tables(const resample::AxisMap& h, const resample::AxisMap& w, Device device) {
  PackedTables packed = pack_tables(h, w);
  DeviceTables t;
  t.ints = upload(packed.ints, kLong, device);
  t.reals = upload(packed.reals, kDouble, device);
  t.h = view_axis(packed.h, t.ints.data_ptr<int64_t>(), t.reals.data_ptr<double>());
  t.w = view_axis(packed.w, t.ints.data_ptr<int64_t>(), t.reals.data_ptr<double>());
  t.any_empty = packed.h.any_empty || packed.w.any_empty;
  return t;
}

void separable_gather(const Tensor& x, const Tensor& out, const resample::AxisMap& h,
                      const resample::AxisMap& w) {
  check_operands(x, out);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  DeviceTables t = upload_tables(h, w, out.device());
  const int64_t planes = planes_of(out, h.out_size() * w.out_size());
  const unsigned blocks = blocks_for(out.numel());
  cudaStream_t stream = current_raw_stream();
  auto launch = [&]<class B>() {
    gather_kernel<B><<<blocks, kThreads, 0, stream>>>(static_cast<const B*>(x.data_ptr()),
                                                      static_cast<B*>(out.data_ptr()), planes, t.h, t.w);
  };
  binary_kernels::visit_by_size(x.dtype(), launch);  // the bits move, whatever the dtype
  EMBER_CUDA_CHECK_LAUNCH();
}

void separable_map(const Tensor& x, const Tensor& out, const resample::AxisMap& h,
                   const resample::AxisMap& w) {
  check_operands(x, out);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  DeviceTables t = upload_tables(h, w, out.device());
  const int64_t planes = planes_of(out, h.out_size() * w.out_size());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ember::detail::throw_error("internal error: a weighted CUDA map was called with a bool tensor");
    } else {
      map_kernel<T><<<blocks_for(out.numel()), kThreads, 0, current_raw_stream()>>>(
          static_cast<const device_t<T>*>(x.data_ptr()), static_cast<device_t<T>*>(out.data_ptr()), planes,
          t.h, t.w);
      EMBER_CUDA_CHECK_LAUNCH();
    }
  });
}

void separable_map_adjoint(const Tensor& g, const Tensor& out, const resample::AxisMap& h,
                           const resample::AxisMap& w) {
  check_operands(g, out);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  // An empty g (no outputs) leaves every input without terms: the kernel writes zeros.
  DeviceTables t = upload_tables(h, w, out.device());
  const int64_t planes = planes_of(out, h.in_size * w.in_size);
  visit_dtype(g.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ember::detail::throw_error("internal error: a weighted CUDA map was called with a bool tensor");
    } else {
      adjoint_kernel<T><<<blocks_for(out.numel()), kThreads, 0, current_raw_stream()>>>(
          static_cast<const device_t<T>*>(g.data_ptr()), static_cast<device_t<T>*>(out.data_ptr()), planes,
          t.h, t.w);
      EMBER_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace ember::cuda
