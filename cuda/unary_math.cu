// cuda::unary_map for the floating-point math maps (exp and log families, roots, trigonometric
// and hyperbolic functions, sigmoid, erf). The formulas are the CPU's: the functors of
// core/ops/unary_math.h, whose ember::math calls are CUDA's math functions here (expf for
// float, exp for double).
#include <cuda_runtime.h>

#include "ember/cuda/unary.cuh"

EMBER_CUDA_UNARY_MATH_MAPS(EMBER_CUDA_INSTANTIATE_UNARY_MAP)
