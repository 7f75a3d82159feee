// bernoulli_ with a scalar p on the CPU (random.cpp): the vectorised sampler behind
// bernoulli_ and dropout on dense float and double tensors.
#pragma once

#include <cstdint>

namespace ember::cpu {

/// out[k] = (philox::uniform01(key, start + k) < p) ? on : 0 for k < n, p in (0, 1): the
/// scalar sampler's and the CUDA kernel's decision for each element, eight Philox blocks at a
/// time where AVX2 is there. T: float or double.
template <class T>
void fill_bernoulli(T* out, int64_t n, uint64_t key, uint64_t start, double p, T on);

}  // namespace ember::cpu
