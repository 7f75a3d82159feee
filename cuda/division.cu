// cuda::binary_map for rounding division, remainder and fmod (core/ops/binary_math.h's
// DivTruncFn, DivFloorFn, RemainderFn, FmodFn): the CPU's formulas. An integer division by
// zero stores 0 here and raises nothing (binary_math.h says why); the CPU raises.
#include <cuda_runtime.h>

#include "ember/cuda/binary.cuh"

EMBER_CUDA_BINARY_DIVISION_MAPS(EMBER_CUDA_INSTANTIATE_BINARY_MAP)
