// cuda::binary_map for the arithmetic functors (core/ops/binary_math.h: add, sub, mul, div,
// maximum/minimum, the bitwise ops) and lerp with a scalar weight (ternary_math.h): the
// formulas the CPU loops run, whose ember::math calls are CUDA's math functions here.
#include <cuda_runtime.h>

#include "ember/cuda/binary.cuh"

EMBER_CUDA_BINARY_ARITH_MAPS(EMBER_CUDA_INSTANTIATE_BINARY_MAP)
