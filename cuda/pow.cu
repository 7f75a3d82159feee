// pow and atan2 on CUDA: cuda::binary_map for PowFn and Atan2Fn, and cuda::unary_map for the
// one-input maps of a tensor and a scalar (pow with a scalar exponent, mul/div by a number in
// opmath): core/ops/binary_math.h's formulas, so that both devices round alike.
#include <cuda_runtime.h>

#include "ember/cuda/binary.cuh"
#include "ember/cuda/unary.cuh"

EMBER_CUDA_BINARY_POW_MAPS(EMBER_CUDA_INSTANTIATE_BINARY_MAP)
EMBER_CUDA_SCALAR_OPERAND_MAPS(EMBER_CUDA_INSTANTIATE_UNARY_MAP)
