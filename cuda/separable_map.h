// The CUDA kernels of the separable linear maps (core/ops/separable_map.cpp: average and
// adaptive-average pooling, reflection/replication/circular padding, nearest and linear
// interpolation) and the upload of their tap tables, which cuda/pooling.cu shares. Plain C++
// declarations, defined in cuda/separable_map.cu (cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include "ember/core/tensor.h"
#include "ember/cuda/axis_tables.h"

namespace ember::resample {
struct AxisMap;
}

namespace ember::cuda {

/// Both axes' tables (cuda/axis_tables.h) in device memory: the views point into ints and
/// reals, which keep the memory alive while the tables are in use.
struct DeviceTables {
  Tensor ints, reals;
  AxisView h, w;
  bool any_empty = false;  // some output of either axis has no taps
};

/// Packs h and w with their transposes and copies them to `device` through pinned memory on
/// the current stream, without waiting for the copy (kernels queued after it see the tables).
DeviceTables upload_tables(const resample::AxisMap& h, const resample::AxisMap& w, Device device);

/// out[p, oh, ow] = x[p, ih(oh), iw(ow)] for gather maps (every output reads one input with
/// weight 1 and divisor 1), any dtype. x and out are contiguous CUDA tensors whose last two
/// dims are (h.in, w.in) and (h.out, w.out), with the same leading dims.
void separable_gather(const Tensor& x, const Tensor& out, const resample::AxisMap& h,
                      const resample::AxisMap& w);
/// out = the map applied to each plane of x, computed in opmath_t as the CPU's map_planes;
/// every dtype but bool (the op has rejected the dtypes its map does not take).
void separable_map(const Tensor& x, const Tensor& out, const resample::AxisMap& h,
                   const resample::AxisMap& w);
/// out (input-shaped) = the map's adjoint applied to each plane of g (output-shaped), each
/// input gathering its terms in output order: deterministic, no atomics. Every dtype but bool.
void separable_map_adjoint(const Tensor& g, const Tensor& out, const resample::AxisMap& h,
                           const resample::AxisMap& w);

}  // namespace ember::cuda
