// Copies that touch CUDA memory (cuda/copy.h): device-device with dtype casts and broadcasting
// (one elementwise kernel, or cudaMemcpyAsync when nothing needs converting), host-device
// transfers through a dense staging tensor, and fill.
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/cuda/copy.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/runtime/pinned_allocator.h"

namespace ember::cuda {
namespace {

/// Whether dst = src needs no conversion at all: one memcpy of the bytes.
bool is_plain_copy(const Tensor& dst, const Tensor& src) {
  return src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() && src.sizes().equals(dst.sizes());
}

/// dst = src on one device: the cast kernel for every (dst, src) dtype pair. Bool results are
/// "!= 0", as on the CPU.
void cast_kernel(const Tensor& dst, const Tensor& src) {
  TensorIter iter(dst, {src});
  auto same_value = [] __device__(auto v) { return v; };
  visit_dtype(dst.dtype(), [&]<typename D>() {
    visit_dtype(src.dtype(), [&]<typename S>() { gpu_map<D, S>(iter, same_value); });
  });
}

/// f() = v: the map of fill.
template <class V>
struct ConstantFn {
  V v;
  __device__ V operator()() const { return v; }
};

void device_to_device(const Tensor& dst, const Tensor& src);

/// A copy of src (on another GPU) on dst's device, same dtype, dense.
Tensor bring_to_device(const Tensor& src, Device device) {
  Tensor dense = empty(src.sizes(), TensorOptions().dtype(src.dtype()).device(src.device()));
  device_to_device(dense, src);
  // The peer copy runs on dst's stream, which knows nothing of the work that produced src on
  // its own device: wait for that first (multi-GPU copies are rare; correctness over overlap).
  getCurrentCUDAStream(src.device().index()).synchronize();
  Tensor here = empty(src.sizes(), TensorOptions().dtype(src.dtype()).device(device));
  DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(here.data_ptr(), device.index(), dense.data_ptr(), src.device().index(),
                                       dense.nbytes(), current_raw_stream()));
  return here;
}

void device_to_device(const Tensor& dst, const Tensor& src) {
  if (src.device() != dst.device()) {
    device_to_device(dst, bring_to_device(src, dst.device()));
    return;
  }
  DeviceGuard guard(dst.device());
  Tensor s = src;
  // A source overlapping dst in another layout is read completely before anything is written.
  if (src.is_alias_of(dst) && !(src.sizes() == dst.sizes() && src.strides() == dst.strides() &&
                                src.storage_offset() == dst.storage_offset())) {
    s = empty(src.sizes(), TensorOptions().dtype(src.dtype()).device(src.device()));
    device_to_device(s, src);
  }
  if (is_plain_copy(dst, s)) {
    if (s.data_ptr() != dst.data_ptr())
      EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), s.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice,
                                       current_raw_stream()));
    return;
  }
  cast_kernel(dst, s);
}

/// Waits for a host<->device transfer unless the caller asked not to and the host side is
/// pinned (page-locked memory is read by DMA asynchronously; then the pinned block is kept
/// from reuse until the transfer is done).
void finish_transfer(const void* host_ptr, bool non_blocking) {
  cudaStream_t stream = current_raw_stream();
  if (non_blocking && is_pinned_ptr(host_ptr)) {
    record_host_use(host_ptr, getCurrentCUDAStream());
    return;
  }
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void host_to_device(const Tensor& dst, const Tensor& src, bool non_blocking) {
  DeviceGuard guard(dst.device());
  // Dense host bytes in dst's dtype and shape (converted on the CPU, where it is cheap).
  Tensor host = src;
  if (!is_plain_copy(dst, src)) {
    host = empty(dst.sizes(), TensorOptions().dtype(dst.dtype()));
    ember::detail::copy_into(host, src);
  }
  Tensor target = dst.is_contiguous() ? dst : empty(dst.sizes(), TensorOptions().dtype(dst.dtype()).device(dst.device()));
  EMBER_CUDA_CHECK(cudaMemcpyAsync(target.data_ptr(), host.data_ptr(), dst.nbytes(), cudaMemcpyHostToDevice,
                                   current_raw_stream()));
  // A staging tensor made here dies with this function: only the caller's own memory may be
  // left in flight.
  finish_transfer(host.data_ptr(), non_blocking && host.is_same(src));
  if (!target.is_same(dst)) device_to_device(dst, target);
}

void device_to_host(const Tensor& dst, const Tensor& src, bool non_blocking) {
  DeviceGuard guard(src.device());
  // Convert on the GPU, so that only dst's bytes cross the bus.
  Tensor dense = src;
  if (!is_plain_copy(dst, src)) {
    dense = empty(dst.sizes(), TensorOptions().dtype(dst.dtype()).device(src.device()));
    device_to_device(dense, src);
  }
  Tensor host = dst.is_contiguous() ? dst : empty(dst.sizes(), TensorOptions().dtype(dst.dtype()));
  EMBER_CUDA_CHECK(cudaMemcpyAsync(host.data_ptr(), dense.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToHost,
                                   current_raw_stream()));
  finish_transfer(host.data_ptr(), non_blocking && host.is_same(dst) && dense.is_same(src));
  if (!host.is_same(dst)) ember::detail::copy_into(const_cast<Tensor&>(dst), host);
}

}  // namespace

void copy(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.numel() == 0) return;
  if (dst.is_cuda() && src.is_cuda()) device_to_device(dst, src);
  else if (dst.is_cuda()) host_to_device(dst, src, non_blocking);
  else if (src.is_cuda()) device_to_host(dst, src, non_blocking);
  else ember::detail::copy_into(const_cast<Tensor&>(dst), src);
}

void fill(const Tensor& dst, const Scalar& value) {
  if (dst.numel() == 0) return;
  DeviceGuard guard(dst.device());
  TensorIter iter = TensorIter::nullary(dst);
  visit_dtype(dst.dtype(), [&]<typename T>() {
    opmath_t<T> v = value.to<opmath_t<T>>();
    gpu_map<T>(iter, ConstantFn<opmath_t<T>>{v});
  });
}

}  // namespace ember::cuda
