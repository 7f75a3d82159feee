// The CUDA kernels of max pooling (core/ops/pooling.cpp's MaxPool and its backward,
// MaxPoolScatter) over the windows of resample::AxisMap tables. Average and adaptive-average
// pooling are separable maps (cuda/separable_map.h). Plain C++ declarations, defined in
// cuda/pooling.cu (cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include "ember/core/tensor.h"

namespace ember::resample {
struct AxisMap;
}

namespace ember::cuda {

/// values[p, oh, ow] = max of x[p] over the window (h taps of oh) x (w taps of ow), and
/// indices (int64) = its offset in the plane; ties keep the first position in row-major scan
/// order and NaN wins, as on the CPU. x contiguous, every dtype but bool.
void max_pool(const Tensor& x, const Tensor& values, const Tensor& indices, const resample::AxisMap& h,
              const resample::AxisMap& w);
/// out[p, i] = sum of grad[p, o] over the outputs o whose index is i: each input gathers from
/// the windows that cover it, in output order, so the result is deterministic and bitwise the
/// CPU's even where windows overlap. grad and indices contiguous and of one shape; out has
/// the input's shape; floating dtypes.
void max_pool_scatter(const Tensor& grad, const Tensor& indices, const Tensor& out,
                      const resample::AxisMap& h, const resample::AxisMap& w);

}  // namespace ember::cuda
