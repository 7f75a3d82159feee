// The CUDA kernels of the indexing ops (core/ops/index.cpp, core/ops/scatter.cpp): the two
// indexed loops of Note [Indexed loops], the advanced-indexing offsets, index range checks and
// nonzero. Plain C++ declarations, defined in cuda/index.cu, cuda/scatter.cu and
// cuda/nonzero.cu (or cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include <cstdint>

#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember {
class TensorIter;
}

namespace ember::cuda {

/// How an indexed write combines the destination's old value with the source's.
enum class ScatterFn {
  kAssign,  // dst = src; with repeated indices one of the writes wins, unspecified which
  kAdd,     // dst = dst + alpha * src (bool: dst || (alpha && src)), deterministic
};

/// out[i] = *(src[i] + idx[i] * step) over TensorIter(out, {src, idx}) on one CUDA device,
/// idx int64, every operand of `dtype` except idx (Note [Indexed loops]).
void indexed_gather(const TensorIter& iter, ScalarType dtype, int64_t step);

/// *(dst[i] + idx[i] * step) = fn(old, src[i]) over TensorIter(dst, {src, idx}), where dst is
/// a view of `dst_storage_of` (the tensor written, which bounds the reachable offsets).
/// kAdd sums repeated destinations in the iterator's order, as the CPU's serial loop does,
/// so the result is deterministic and bit-identical to the CPU's (see cuda/scatter.cu).
void indexed_scatter(const TensorIter& iter, const Tensor& dst_storage_of, int64_t step, ScatterFn fn,
                     const Scalar& alpha = 1);

/// Advanced indexing's element offsets: offsets += wrap(indices[j]) * strides[j] for each j,
/// where indices[j] is an int64 tensor of offsets' shape (broadcast views are fine) and its
/// values must lie in [-sizes[j], sizes[j]). Returns false, after one host synchronisation,
/// when some value does not (offsets are then unspecified; the caller raises the error).
bool add_index_offsets(const Tensor& offsets, const TensorList& indices, IntArrayRef sizes,
                       IntArrayRef strides);

/// Whether some value of an int64 CUDA tensor lies outside [lo, hi) (one host synchronisation).
bool any_out_of_range(const Tensor& index, int64_t lo, int64_t hi);

/// nonzero of a CUDA tensor: the (count, dim) int64 multi-indices of its nonzero elements in
/// row-major order. The count is a host value: one host synchronisation, as PyTorch's.
Tensor nonzero(const Tensor& self);

}  // namespace ember::cuda
