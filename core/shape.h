// Shape logic shared by ops: dimension wrapping, broadcasting, contiguous strides, and the
// stride arithmetic that decides whether a view is possible. Errors use PyTorch's words.
#pragma once

#include <optional>

#include "ember/core/array_ref.h"
#include "ember/core/small_vector.h"

namespace ember {

/// Wraps a possibly negative dim into [0, ndim); a 0-d tensor accepts dims -1 and 0.
int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool wrap_scalar = true);
/// Wraps every dim and checks none repeats ("dim 1 appears multiple times in the list of dims").
DimVector wrap_dims(IntArrayRef dims, int64_t ndim);
/// A bitmask of the dims in `dims` (empty = all dims), as reductions use.
uint64_t dim_mask(IntArrayRef dims, int64_t ndim);

int64_t prod_of(IntArrayRef sizes);
DimVector contiguous_strides(IntArrayRef sizes);
bool is_contiguous_geometry(IntArrayRef sizes, IntArrayRef strides);
/// True when two elements share one memory location (a stride 0 over a size > 1, as expand
/// makes); in-place writes into such a tensor raise check_no_internal_overlap's error.
bool has_internal_overlap(IntArrayRef sizes, IntArrayRef strides);
/// PyTorch's "unsupported operation: more than one element of the written-to tensor refers
/// to a single memory location. ..." for a tensor about to be written in place.
void check_no_internal_overlap(IntArrayRef sizes, IntArrayRef strides);

/// Broadcast shape of a and b, or PyTorch's "The size of tensor a (3) must match ..." error.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
/// Fills in a -1 in a requested view/reshape shape ("shape '[2, 5]' is invalid for input of size 6").
DimVector infer_size(IntArrayRef shape, int64_t numel);
/// Strides for viewing (sizes, strides) as new_sizes without copying, if possible
/// (PyTorch's computeStride); nullopt when the memory layout does not allow it.
std::optional<DimVector> compute_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);

}  // namespace ember
