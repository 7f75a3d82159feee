// The CUDA kernel of embedding's forward (core/ops/embedding.cpp): a gather of weight rows.
// Its backward (index_add into zeros) and one_hot are built from ops with CUDA kernels.
// Plain C++ declaration, defined in cuda/embedding.cu (cuda/no_cuda.cpp without CUDA).
#pragma once

#include "ember/core/tensor.h"

namespace ember::cuda {

/// out[i, :] = weight[idx[i], :]: weight (rows, dim) and out (idx.numel(), dim) contiguous of
/// one dtype, idx a dense int64 CUDA tensor already checked to lie in [0, rows).
void embedding_rows(const Tensor& weight, const Tensor& idx, const Tensor& out);

}  // namespace ember::cuda
