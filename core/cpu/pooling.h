// Max pooling on the CPU (pooling.cpp): the kernel behind max_pool1d/2d and
// adaptive_max_pool1d/2d, over windows given per axis as resample::AxisMap taps.
#pragma once

#include <cstdint>

#include "ember/core/ops/separable_map.h"

namespace ember::cpu {

/// y = the maximum over each window of each of `planes` contiguous input planes (h.in_size x
/// w.in_size, output planes h.out_size() x w.out_size()), idx = its position in the input
/// plane. Ties keep the first position in scan order, NaN wins (PyTorch's CPU kernel).
/// Defined for every dtype (the ops reject bool before calling it).
template <class T>
void max_planes(const T* x, T* y, int64_t* idx, int64_t planes, const resample::AxisMap& h,
                const resample::AxisMap& w);

}  // namespace ember::cpu
