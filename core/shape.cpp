// Shape logic shared by ops.
#include "ember/core/shape.h"

#include "ember/core/error.h"

namespace ember {

int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool wrap_scalar) {
  if (ndim <= 0) {
    EMBER_CHECK(wrap_scalar, "dimension specified as ", dim, " but tensor has no dimensions");
    ndim = 1;
  }
  int64_t lo = -ndim, hi = ndim - 1;
  EMBER_CHECK(dim >= lo && dim <= hi, "Dimension out of range (expected to be in range of [", lo,
              ", ", hi, "], but got ", dim, ")");
  return dim < 0 ? dim + ndim : dim;
}

DimVector wrap_dims(IntArrayRef dims, int64_t ndim) {
  DimVector out;
  uint64_t seen = 0;
  for (int64_t d : dims) {
    int64_t w = maybe_wrap_dim(d, ndim);
    EMBER_CHECK(!(seen & (uint64_t{1} << w)), "dim ", w, " appears multiple times in the list of dims");
    seen |= uint64_t{1} << w;
    out.push_back(w);
  }
  return out;
}

uint64_t dim_mask(IntArrayRef dims, int64_t ndim) {
  if (dims.empty()) return ndim >= 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  uint64_t mask = 0;
  for (int64_t d : wrap_dims(dims, ndim)) mask |= uint64_t{1} << d;
  return mask;
}

int64_t prod_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

bool is_contiguous_geometry(IntArrayRef sizes, IntArrayRef strides) {
  // An empty tensor is contiguous whatever its strides (PyTorch's compute_contiguous).
  for (int64_t s : sizes)
    if (s == 0) return true;
  int64_t expected = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool has_internal_overlap(IntArrayRef sizes, IntArrayRef strides) {
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 1 && strides[i] == 0) return true;
  return false;
}

void check_no_internal_overlap(IntArrayRef sizes, IntArrayRef strides) {
  EMBER_CHECK(!has_internal_overlap(sizes, strides),
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  // From the last dim, as PyTorch's infer_size: the error names the innermost mismatch.
  for (size_t i = n; i-- > 0;) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, "The size of tensor a (", da,
                ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector infer_size(IntArrayRef shape, int64_t numel) {
  DimVector out(shape);
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(!infer, "only one dimension can be inferred");
      infer = i;
    } else {
      EMBER_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  // PyTorch's infer_size_impl: with 0 elements and a -1 the inferred size is ambiguous.
  bool ok = numel == known || (infer && known > 0 && numel % known == 0);
  EMBER_CHECK(ok, "shape '", shape, "' is invalid for input of size ", numel);
  if (infer) {
    EMBER_CHECK(known != 0, "cannot reshape tensor of 0 elements into shape ", shape,
                " because the unspecified dimension size -1 can be any value and is ambiguous");
    out[*infer] = numel / known;
  }
  return out;
}

std::optional<DimVector> compute_view_strides(IntArrayRef sizes, IntArrayRef strides,
                                              IntArrayRef new_sizes) {
  DimVector new_strides(new_sizes.size());
  if (sizes.empty()) {
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  if (prod_of(sizes) == 0) return contiguous_strides(new_sizes);
  // Walk old dims in chunks that are contiguous among themselves; each chunk must map to a
  // run of new dims with the same number of elements.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

}  // namespace ember
