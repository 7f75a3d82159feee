// select/slice/diagonal_scatter, masked_scatter and copy, built from public ops: a clone, then
// an in-place copy into the clone's view (or index_put_ for masked_scatter). The recorded graph
// is clone -> view -> copy_, so autograd's view rebasing gives both gradients without a
// backward of their own.
#include "ember/core/ops/view_scatter.h"

#include "ember/core/error.h"
#include "ember/core/ops/copy.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/views.h"
#include "ember/core/shape.h"

namespace ember {
namespace {

/// clone(input) with `view_of(clone)` overwritten by src; src must have the view's shape
/// (PyTorch's text; no broadcasting, unlike copy_).
template <class ViewFn>
Tensor scatter_into_view(const Tensor& input, const Tensor& src, ViewFn view_of) {
  Tensor out = clone(input);
  Tensor view = view_of(out);
  EMBER_CHECK(view.sizes() == src.sizes(), "expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", view.sizes());
  view.copy_(src);
  return out;
}

}  // namespace

Tensor select_scatter(const Tensor& input, const Tensor& src, int64_t dim, int64_t index) {
  return scatter_into_view(input, src, [&](const Tensor& t) { return select(t, dim, index); });
}

Tensor slice_scatter(const Tensor& input, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  return scatter_into_view(input, src, [&](const Tensor& t) { return slice(t, dim, start, end, step); });
}

Tensor diagonal_scatter(const Tensor& input, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
  return scatter_into_view(input, src, [&](const Tensor& t) { return diagonal(t, offset, dim1, dim2); });
}

Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              scalar_type_name(mask.dtype()));
  // PyTorch's text, without the space it lacks.
  EMBER_CHECK(input.dtype() == source.dtype(), "masked_scatter: expected self and source to have same dtypes but got",
              scalar_type_name(input.dtype()), " and ", scalar_type_name(source.dtype()));
  const DimVector shape = broadcast_shapes(input.sizes(), mask.sizes());
  Tensor out = clone(input.expand(shape.ref())).reshape({-1});
  Tensor positions = nonzero(mask.expand(shape.ref()).reshape({-1})).reshape({-1});
  const int64_t count = positions.numel();
  EMBER_CHECK(source.numel() >= count, "Number of elements of source < number of ones in mask");
  index_put_(out, {positions}, source.reshape({-1}).slice(0, 0, count));
  return out.view(shape.ref());
}

Tensor copy(const Tensor& self, const Tensor& src, bool non_blocking) {
  Tensor out = empty_like(self);
  out.copy_(src, non_blocking);
  return out;
}

}  // namespace ember
