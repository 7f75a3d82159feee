// Gradient scaling kernels (cuda/amp.h). The unscale-and-check walks a TensorTable of many
// gradients (cuda/multi_tensor.h), each block one chunk of one tensor, each thread the
// chunk's elements at a stride of the block size (coalesced); a thread that sees a non-finite
// element stores 1 into found_inf once at the end (every writer stores the same value, so the
// race is harmless and no atomic is needed). The scale update is one thread of one block:
// it is a handful of scalar operations on device memory, launched so the host does not wait.
#include <cuda_runtime.h>

#include "ember/core/tensor.h"
#include "ember/cuda/amp.h"
#include "ember/cuda/amp_math.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/multi_tensor.h"

namespace ember::cuda {
namespace {

using UnscaleTable = TensorTable<1, 0>;

template <class T>
__global__ void __launch_bounds__(kMultiTensorThreads)
    unscale_kernel(UnscaleTable table, float* found_inf, const float* inv_scale_ptr) {
  const ChunkRange r = chunk_of(table, static_cast<int>(blockIdx.x));
  auto* data = static_cast<device_t<T>*>(table.ptrs[0][r.slot]);
  const float inv_scale = *inv_scale_ptr;
  bool non_finite = false;
  for (int64_t i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
    const opmath_t<T> v = load_opmath<T>(data + i);
    if (!amp_math::is_finite(v)) non_finite = true;
    if (inv_scale != 1.f) data[i] = to_stored<T>(amp_math::unscale(v, inv_scale));
  }
  if (non_finite) *found_inf = 1.f;
}

__global__ void update_scale_kernel(float* scale, int32_t* growth_tracker, const float* found_inf,
                                    double growth_factor, double backoff_factor, int64_t growth_interval) {
  amp_math::update_scale(*scale, *growth_tracker, *found_inf, growth_factor, backoff_factor, growth_interval);
}

/// A 1-element float32 (or `dtype`) tensor on `device`, as the callers promise.
void check_scalar(const Tensor& t, ScalarType dtype, Device device, const char* what, const char* name) {
  EMBER_CHECK(t.defined() && t.is_cuda() && t.device() == device && t.dtype() == dtype && t.numel() == 1,
              what, ": ", name, " must be a 1-element ", scalar_type_name(dtype), " tensor on ", device);
}

template <class T>
void unscale_typed(const std::vector<Tensor>& grads, float* found_inf, const float* inv_scale) {
  std::vector<int64_t> numels;
  numels.reserve(grads.size());
  for (const Tensor& g : grads) numels.push_back(g.numel());
  const std::vector<MultiTensorLaunch> plan =
      plan_multi_tensor(numels, UnscaleTable::kMaxTensors, UnscaleTable::kMaxBlocks);
  cudaStream_t stream = current_raw_stream();
  for (const MultiTensorLaunch& launch : plan) {
    UnscaleTable table{};
    fill_table(
        launch, [&](int, size_t i) { return grads[i].data_ptr(); }, [&](size_t i) { return numels[i]; },
        [](int, size_t) { return 0.0; }, table);
    unscale_kernel<T><<<static_cast<unsigned>(launch.blocks.size()), kMultiTensorThreads, 0, stream>>>(
        table, found_inf, inv_scale);
    EMBER_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void amp_non_finite_check_and_unscale(const std::vector<Tensor>& grads, const Tensor& found_inf,
                                      const Tensor& inv_scale) {
  const char* what = "_amp_foreach_non_finite_check_and_unscale_";
  if (grads.empty()) return;
  const Tensor& first = grads.front();
  const Device device = first.device();
  check_scalar(found_inf, kFloat, device, what, "found_inf");
  check_scalar(inv_scale, kFloat, device, what, "inv_scale");
  for (const Tensor& g : grads)
    EMBER_CHECK(
        g.defined() && g.is_cuda() && g.device() == device && g.dtype() == first.dtype() && g.is_contiguous(),
        what, ": the gradients must be contiguous CUDA tensors of one device and dtype");
  DeviceGuard guard(device);
  visit_float_dtype(first.dtype(), what, [&]<typename T>() {
    unscale_typed<T>(grads, static_cast<float*>(found_inf.data_ptr()),
                     static_cast<const float*>(inv_scale.data_ptr()));
  });
}

void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval) {
  const char* what = "_amp_update_scale_";
  EMBER_CHECK(scale.defined() && scale.is_cuda(), what, ": scale must be a CUDA tensor");
  const Device device = scale.device();
  check_scalar(scale, kFloat, device, what, "current_scale");
  check_scalar(growth_tracker, kInt, device, what, "growth_tracker");
  check_scalar(found_inf, kFloat, device, what, "found_inf");
  DeviceGuard guard(device);
  update_scale_kernel<<<1, 1, 0, current_raw_stream()>>>(
      static_cast<float*>(scale.data_ptr()), static_cast<int32_t*>(growth_tracker.data_ptr()),
      static_cast<const float*>(found_inf.data_ptr()), growth_factor, backoff_factor, growth_interval);
  EMBER_CUDA_CHECK_LAUNCH();
}

}  // namespace ember::cuda
