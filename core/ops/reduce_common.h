// Helpers shared by the reduction family (reduce.cpp, minmax.cpp, norm.cpp, scan.cpp,
// sort.cpp): output shapes of reductions over a dim bitmask, the undoing of keepdim=false
// that every reduction's backward needs, and the gradient of ops that pick elements.
#pragma once

#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/shape.h"
#include "ember/core/tensor.h"

namespace ember::detail {

inline bool in_mask(uint64_t mask, int64_t d) { return (mask >> d) & 1; }

/// Output shape of a reduction over `mask`, with or without the reduced dims.
inline DimVector reduced_shape(IntArrayRef sizes, uint64_t mask, bool keepdim) {
  DimVector out;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (!in_mask(mask, d))
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

/// Number of elements each output of a reduction over `mask` folds.
inline int64_t reduced_numel(IntArrayRef sizes, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d)
    if (in_mask(mask, d)) n *= sizes[d];
  return n;
}

/// A reduction's output (or its gradient) with the reduced dims restored as size 1, so it
/// broadcasts against the input (PyTorch's unsqueeze_multiple).
inline Tensor unsqueeze_reduced(const Tensor& t, int64_t ndim, uint64_t mask, bool keepdim) {
  Tensor r = t;
  if (!keepdim)
    for (int64_t d = 0; d < ndim; ++d)
      if (in_mask(mask, d)) r = r.unsqueeze(d);
  return r;
}

/// Broadcasts a reduced gradient back over the reduced dims.
inline Tensor expand_reduced(const Tensor& grad, IntArrayRef in_sizes, uint64_t mask, bool keepdim) {
  return unsqueeze_reduced(grad, static_cast<int64_t>(in_sizes.size()), mask, keepdim).expand(in_sizes);
}

/// The dims set in `mask`, ascending (for ops that take a dim list).
inline DimVector mask_dims(uint64_t mask, int64_t ndim) {
  DimVector out;
  for (int64_t d = 0; d < ndim; ++d)
    if (in_mask(mask, d)) out.push_back(d);
  return out;
}

/// The gradient of an op that picks elements along `dim` (max/min over a dim, sort, topk):
/// each output's gradient goes back to the input position `indices` names; others get 0.
inline Tensor value_selecting_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                                       IntArrayRef sizes, bool keepdim) {
  if (sizes.empty()) return grad;  // a 0-dim input: its one element was picked
  Tensor g = keepdim ? grad : grad.unsqueeze(dim);
  Tensor i = keepdim ? indices : indices.unsqueeze(dim);
  return zeros(sizes, grad.options()).scatter(dim, i, g);
}

}  // namespace ember::detail
