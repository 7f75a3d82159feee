// Gradient scaling on CUDA tensors (the CUDA side of optim/grad_scaler.cpp): PyTorch's
// _amp_foreach_non_finite_check_and_unscale_ as one multi-tensor kernel over many gradients
// (cuda/multi_tensor.h) and _amp_update_scale_ as a one-thread kernel, both reading the scale
// from device memory, so neither waits for the device. Plain C++ declarations; the kernels are
// in cuda/amp.cu (cuda/no_cuda.cpp in a build without CUDA). The arithmetic is cuda/amp_math.h's.
#pragma once

#include <cstdint>
#include <vector>

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// grads[i] *= inv_scale, element by element in float for the 16-bit types, and found_inf is
/// set to 1 when any element of any gradient is inf or NaN (it is left alone otherwise). The
/// gradients: contiguous CUDA tensors of one device and one floating dtype; found_inf and
/// inv_scale: 1-element float32 tensors on that device.
void amp_non_finite_check_and_unscale(const std::vector<Tensor>& grads, const Tensor& found_inf,
                                      const Tensor& inv_scale);

/// amp_math::update_scale on the device: scale (1-element float32), growth_tracker
/// (1-element int32) and found_inf (1-element float32), all on one CUDA device.
void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval);

}  // namespace ember::cuda
