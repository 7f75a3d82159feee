// visit_by_size, internal to cuda/: the dtype visit of kernels that only move elements (where
// and masked_fill in ternary.cu, embedding.cu, separable_map.cu). The binary ops' formulas
// live in core/ops/binary_math.h and friends (cuda/binary.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ember/core/tensor.h"
#include "ember/cuda/loops.cuh"

namespace ember::cuda::binary_kernels {

/// Calls f.template operator()<U>() with U the unsigned integer of t's element size: for
/// kernels that only move elements (where, masked_fill), so that 4 instances serve 10 dtypes
/// and every bit pattern (NaN payloads included) is kept.
template <class F>
void visit_by_size(ScalarType t, F&& f) {
  switch (element_size(t)) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    default:
      return f.template operator()<uint64_t>();
  }
}

}  // namespace ember::cuda::binary_kernels
