// View ops: results share storage with their input (Note [Version counter]).
// Each op computes the view's geometry; its backward maps the view's gradient back to the
// input's shape. Copying shape ops (cat, stack, flip, ...) are in shape.cpp.
#include <algorithm>
#include <numeric>

#include "ember/autograd/grad_mode.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/views.h"
#include "ember/core/shape.h"

namespace ember {
namespace {

Tensor make_view(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return Tensor(intrusive_ptr<TensorImpl>::make(x.unsafeGetTensorImpl()->storage(), x.dtype(), sizes, strides, offset));
}

/// Views have no kernel of their own: run_view_op builds them; these ops exist for backward.
struct ViewOpBase : UnaryOp {
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor&, Tensor&) const override {}
};

/// The gradient of a view that picks part of its input (select, slice, diagonal): zeros
/// of the input's shape with the view's region set to the gradient.
/// Its own backward takes the same view of the incoming gradient.
struct EmbedView final : UnaryOp {
  DimVector base_sizes;
  std::function<Tensor(const Tensor&)> view_fn;
  EmbedView(DimVector sizes, std::function<Tensor(const Tensor&)> fn)
      : base_sizes(std::move(sizes)), view_fn(std::move(fn)) {}
  const char* name() const override { return "embed_view"; }
  Save saves() const override { return Save::kNothing; }
  void embed(const Tensor& grad, Tensor& out) const {
    AutoGradMode off(false);
    out.zero_();
    view_fn(out).copy_(grad);
  }
  void cpu(const Tensor& g, Tensor& out) const override { embed(g, out); }
  void cuda(const Tensor& g, Tensor& out) const override { embed(g, out); }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override { return view_fn(grad); }
};

Tensor embed_view(const Tensor& grad, IntArrayRef base_sizes, std::function<Tensor(const Tensor&)> fn) {
  return run_op(EmbedView{DimVector(base_sizes), std::move(fn)}, {grad}, OutSpec{DimVector(base_sizes), grad.dtype()});
}

// view / reshape / flatten / squeeze / unsqueeze: grad has the input's numel; reshape it back.
struct ViewReshape final : ViewOpBase {
  const char* name() const override { return "view"; }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return grad.reshape(s.input_sizes(0));
  }
};

struct Permute final : ViewOpBase {
  DimVector dims;
  explicit Permute(DimVector d) : dims(std::move(d)) {}
  const char* name() const override { return "permute"; }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override {
    DimVector inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
    return grad.permute(inverse);
  }
};

// expand: each input element fed several outputs; its gradient is their sum.
struct Expand final : ViewOpBase {
  const char* name() const override { return "expand"; }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return sum_to_size(grad, s.input_sizes(0));
  }
};

/// Views that select a region (select, slice, narrow, diagonal).
struct RegionView final : ViewOpBase {
  const char* op_name;
  std::function<Tensor(const Tensor&)> view_fn;
  RegionView(const char* n, std::function<Tensor(const Tensor&)> fn) : op_name(n), view_fn(std::move(fn)) {}
  const char* name() const override { return op_name; }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return embed_view(grad, s.input_sizes(0), view_fn);
  }
};

/// Sizes, strides and storage offset: where a tensor's elements sit in its storage.
struct Geometry {
  DimVector sizes, strides;
  int64_t offset;
  /// One past the last storage position used (offset when empty).
  int64_t end() const {
    int64_t last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0) return offset;
      last += (sizes[d] - 1) * strides[d];
    }
    return last + 1;
  }
  /// The storage position of every element, relative to `base`, as an int64 tensor of `sizes`
  /// on `device` (the gradient's, which index_add needs its index on).
  Tensor positions(int64_t base, Device device) const {
    TensorOptions opts = TensorOptions().dtype(kLong).device(device);
    Tensor pos = full({}, offset - base, opts);
    for (size_t d = 0; d < sizes.size(); ++d) {
      DimVector shape(sizes.size(), 1);
      shape[d] = sizes[d];
      pos = pos + arange(sizes[d], opts).view(shape) * strides[d];
    }
    return pos;
  }
};

// as_strided: the view reads storage positions that may repeat (overlapping windows) and need
// not follow the input's own layout (a transposed input). So the gradient goes through a
// buffer standing for the storage: grad is added at the view's positions (index_add, so a
// position read twice gets both gradients), then read back at the input's positions.
struct AsStrided final : ViewOpBase {
  Geometry input, view;
  AsStrided(Geometry in, Geometry v) : input(std::move(in)), view(std::move(v)) {}
  const char* name() const override { return "as_strided"; }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override {
    int64_t lo = std::min(input.offset, view.offset), hi = std::max(input.end(), view.end());
    Tensor buffer = zeros({std::max<int64_t>(hi - lo, 0)}, grad.options())
                        .index_add(0, view.positions(lo, grad.device()).reshape({-1}), grad.reshape({-1}));
    return buffer.as_strided(input.sizes, input.strides, input.offset - lo);
  }
};

Tensor view_impl(const Tensor& x, IntArrayRef size, const char* what) {
  DimVector shape = infer_size(size, x.numel());
  auto strides = compute_view_strides(x.sizes(), x.strides(), shape);
  EMBER_CHECK(strides.has_value(), what);
  return run_view_op(ViewReshape{}, x, make_view(x, shape, *strides, x.storage_offset()));
}

/// x's storage offset moved by `count` steps of `stride` elements (slice, select, diagonal).
/// An as_strided view can hold a stride near INT64_MAX on a dim it never steps along, where
/// that offset, or the offset in bytes that data_ptr() forms, overflows int64 (fuzz_ops under
/// UBSan). Only an empty result gets there, and nothing is read through it: it keeps x's
/// offset. Any other result's offset lies inside x's extent and is PyTorch's.
int64_t moved_offset(const Tensor& x, int64_t count, int64_t stride) {
  int64_t skip = 0, offset = 0, bytes = 0;
  if (__builtin_mul_overflow(count, stride, &skip) ||
      __builtin_add_overflow(x.storage_offset(), skip, &offset) ||
      __builtin_mul_overflow(offset, x.element_size(), &bytes))
    return x.storage_offset();
  return offset;
}

}  // namespace

Tensor view(const Tensor& x, IntArrayRef size) {
  return view_impl(x, size,
                   "view size is not compatible with input tensor's size and stride (at least one dimension "
                   "spans across two contiguous subspaces). Use .reshape(...) instead.");
}

Tensor reshape(const Tensor& x, IntArrayRef size) {
  DimVector shape = infer_size(size, x.numel());
  if (compute_view_strides(x.sizes(), x.strides(), shape)) return view(x, shape);
  return view(x.clone(), shape);
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  int64_t nd = x.dim();
  start_dim = maybe_wrap_dim(start_dim, nd);
  end_dim = maybe_wrap_dim(end_dim, nd);
  EMBER_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (nd == 0) return reshape(x, {1});
  DimVector shape;
  for (int64_t d = 0; d < start_dim; ++d) shape.push_back(x.size(d));
  int64_t n = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) n *= x.size(d);
  shape.push_back(n);
  for (int64_t d = end_dim + 1; d < nd; ++d) shape.push_back(x.size(d));
  return reshape(x, shape);
}

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  dim = maybe_wrap_dim(dim, x.dim());
  EMBER_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  // Check the product first: infer_size's own message would not name unflatten.
  int64_t known = 1, n = x.size(dim);
  bool infer = false;
  for (int64_t v : sizes) {
    if (v == -1) infer = true;
    else known *= v;
  }
  EMBER_CHECK(infer ? (known != 0 && n % known == 0) : known == n, "unflatten: Provided sizes ", sizes,
              " don't multiply up to the size of dim ", dim, " (", n, ") in the input tensor");
  DimVector inner = infer_size(sizes, n);
  DimVector shape;
  for (int64_t d = 0; d < dim; ++d) shape.push_back(x.size(d));
  for (int64_t s : inner) shape.push_back(s);
  for (int64_t d = dim + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
  return view(x, shape);
}

Tensor squeeze(const Tensor& x) {
  DimVector shape, strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.size(d) != 1) { shape.push_back(x.size(d)); strides.push_back(x.stride(d)); }
  return run_view_op(ViewReshape{}, x, make_view(x, shape, strides, x.storage_offset()));
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  dim = maybe_wrap_dim(dim, x.dim());
  if (x.dim() == 0 || x.size(dim) != 1) return run_view_op(ViewReshape{}, x, make_view(x, x.sizes(), x.strides(), x.storage_offset()));
  DimVector shape(x.sizes()), strides(x.strides());
  shape.erase(dim);
  strides.erase(dim);
  return run_view_op(ViewReshape{}, x, make_view(x, shape, strides, x.storage_offset()));
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  dim = maybe_wrap_dim(dim, x.dim() + 1);
  DimVector shape(x.sizes()), strides(x.strides());
  int64_t st = dim < x.dim() ? x.stride(dim) * x.size(dim) : 1;
  shape.insert(dim, 1);
  strides.insert(dim, st);
  return run_view_op(ViewReshape{}, x, make_view(x, shape, strides, x.storage_offset()));
}

Tensor permute(const Tensor& x, IntArrayRef dims) {
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == x.dim(),
              "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
              "the desired ordering of dimensions i.e. input.dim() = ", x.dim(), " is not equal to len(dims) = ",
              dims.size());
  DimVector wrapped;
  uint64_t seen = 0;
  for (int64_t d : dims) {
    int64_t w = maybe_wrap_dim(d, x.dim());
    EMBER_CHECK(!(seen & (uint64_t{1} << w)), "permute(): duplicate dims are not allowed.");
    seen |= uint64_t{1} << w;
    wrapped.push_back(w);
  }
  DimVector shape(x.dim()), strides(x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) {
    shape[i] = x.size(wrapped[i]);
    strides[i] = x.stride(wrapped[i]);
  }
  return run_view_op(Permute{wrapped}, x, make_view(x, shape, strides, x.storage_offset()));
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  int64_t nd = x.dim();
  dim0 = maybe_wrap_dim(dim0, nd);
  dim1 = maybe_wrap_dim(dim1, nd);
  if (nd == 0) return permute(x, {});
  DimVector order(nd);
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[dim0], order[dim1]);
  return permute(x, order);
}

Tensor t(const Tensor& x) {
  EMBER_CHECK(x.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", x.dim(), "D");
  return x.dim() < 2 ? transpose(x, 0, 0) : transpose(x, 0, 1);
}

Tensor expand(const Tensor& x, IntArrayRef size) {
  // libtorch names the tensor by its type, e.g. "expand(CPUFloatType{[2, 3]}, size=[3])".
  EMBER_CHECK(size.size() >= static_cast<size_t>(x.dim()), "expand(", x.is_cuda() ? "CUDA" : "CPU",
              scalar_type_name(x.dtype()), "Type{", x.sizes(), "}, size=", size, "): the number of sizes provided (",
              size.size(), ") must be greater or equal to the number of dimensions in the tensor (", x.dim(), ")");
  int64_t nd = static_cast<int64_t>(size.size()), off = nd - x.dim();
  DimVector shape(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t target = size[i];
    if (i < off) {
      EMBER_CHECK(target >= 0, "The expanded size of the tensor (", target,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      shape[i] = target;
      strides[i] = 0;
      continue;
    }
    int64_t cur = x.size(i - off);
    if (target == -1) target = cur;
    EMBER_CHECK(cur == target || cur == 1, "The expanded size of the tensor (", target,
                ") must match the existing size (", cur, ") at non-singleton dimension ", i,
                ".  Target sizes: ", size, ".  Tensor sizes: ", x.sizes());
    shape[i] = target;
    strides[i] = cur == target ? x.stride(i - off) : 0;
  }
  return run_view_op(Expand{}, x, make_view(x, shape, strides, x.storage_offset()));
}

Tensor broadcast_to(const Tensor& x, IntArrayRef size) { return expand(x, size); }

TensorList broadcast_tensors(const TensorList& tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes());
  TensorList out;
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

Tensor as_strided(const Tensor& x, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  EMBER_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(x.storage_offset());
  EMBER_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  // Every size and stride is checked, also those after a zero size (which makes the view
  // empty and needs no storage): as PyTorch's setStrided, before the bounds.
  for (size_t i = 0; i < size.size(); ++i) {
    EMBER_CHECK(size[i] >= 0, "Trying to create tensor with negative dimension ", size[i], ": ", size);
    EMBER_CHECK(stride[i] >= 0,
                "as_strided: Negative strides are not supported at the moment, got strides: ", stride);
  }
  int64_t max_elem = offset;
  bool overflow = false;  // sizes and strides from anywhere: the extent must not wrap around
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) {
      max_elem = -1, overflow = false;
      break;
    }
    int64_t step = 0;
    overflow |= __builtin_mul_overflow(size[i] - 1, stride[i], &step) ||
                __builtin_add_overflow(max_elem, step, &max_elem);
  }
  int64_t need_bytes = 0;
  overflow = overflow || __builtin_add_overflow(max_elem, 1, &need_bytes) ||
             __builtin_mul_overflow(need_bytes, x.element_size(), &need_bytes);
  EMBER_CHECK(!overflow, "as_strided: sizes ", size, ", strides ", stride, " and storage offset ", offset,
              " need more storage than an int64 byte count can hold");
  int64_t capacity = static_cast<int64_t>(x.unsafeGetTensorImpl()->storage()->nbytes() / x.element_size());
  EMBER_CHECK(max_elem < capacity, "setStorage: sizes ", size, ", strides ", stride, ", storage offset ",
              offset, ", and itemsize ", x.element_size(), " requiring a storage size of ", need_bytes,
              " are out of bounds for storage of size ", capacity * x.element_size());
  AsStrided op{{DimVector(x.sizes()), DimVector(x.strides()), x.storage_offset()}, {DimVector(size), DimVector(stride), offset}};
  return run_view_op(std::move(op), x, make_view(x, size, stride, offset));
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  EMBER_CHECK(x.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = maybe_wrap_dim(dim, x.dim());
  int64_t n = x.size(dim);
  EMBER_CHECK(index >= -n && index < n, "select(): index ", index, " out of range for tensor of size ",
              x.sizes(), " at dimension ", dim);
  if (index < 0) index += n;
  DimVector shape(x.sizes()), strides(x.strides());
  const int64_t offset = moved_offset(x, index, x.stride(dim));
  shape.erase(dim);
  strides.erase(dim);
  auto fn = [dim, index](const Tensor& g) { return g.select(dim, index); };
  return run_view_op(RegionView{"select", fn}, x, make_view(x, shape, strides, offset));
}

Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt,
             int64_t step) {
  EMBER_CHECK(x.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(step > 0, "slice step must be positive");
  dim = maybe_wrap_dim(dim, x.dim());
  int64_t n = x.size(dim);
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  // Counted without signed overflow: a step near INT64_MAX made `end - start + step - 1` and
  // `stride * step` overflow (fuzz_ops). When the product overflows, the step exceeds the
  // dim's length, the result has at most one element along it, and the stride is never used
  // to step: the input's is kept. Otherwise the values are PyTorch's.
  const int64_t span = end - start;
  const int64_t len = span == 0 ? 0 : 1 + (span - 1) / step;
  DimVector shape(x.sizes()), strides(x.strides());
  shape[dim] = len;
  int64_t stride = 0;
  if (!__builtin_mul_overflow(x.stride(dim), step, &stride)) strides[dim] = stride;
  // start == n with a huge stride: an empty result whose offset moved_offset keeps.
  const int64_t offset = moved_offset(x, start, x.stride(dim));
  auto fn = [dim, start, end, step](const Tensor& g) { return g.slice(dim, start, end, step); };
  return run_view_op(RegionView{"slice", fn}, x, make_view(x, shape, strides, offset));
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(x.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(length >= 0, "narrow(): length must be non-negative.");
  dim = maybe_wrap_dim(dim, x.dim());
  int64_t n = x.size(dim);
  EMBER_CHECK(start >= -n && start <= n, "start out of range (expected to be in range of [", -n, ", ", n,
              "], but got ", start, ")");
  if (start < 0) start += n;
  EMBER_CHECK(start <= n - length, "start (", start, ") + length (", length, ") exceeds dimension size (", n, ").");
  return slice(x, dim, start, start + length, 1);
}

TensorList split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim) {
  dim = maybe_wrap_dim(dim, x.dim());
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                split_sizes);
    total += s;
  }
  EMBER_CHECK(total == x.size(dim), "split_with_sizes expects split_sizes to sum exactly to ", x.size(dim),
              " (input tensor's size at dimension ", dim, "), but got split_sizes=", split_sizes);
  TensorList out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(x, dim, start, s));
    start += s;
  }
  return out;
}

TensorList split(const Tensor& x, IntArrayRef split_sizes, int64_t dim) { return split_with_sizes(x, split_sizes, dim); }

TensorList split(const Tensor& x, int64_t split_size, int64_t dim) {
  dim = maybe_wrap_dim(dim, x.dim());
  EMBER_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  int64_t n = x.size(dim);
  EMBER_CHECK(split_size > 0 || n == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ", n);
  std::vector<int64_t> sizes;
  if (split_size == 0) return {narrow(x, dim, 0, 0)};
  for (int64_t s = 0; s < n; s += split_size) sizes.push_back(std::min(split_size, n - s));
  if (sizes.empty()) sizes.push_back(0);
  return split_with_sizes(x, sizes, dim);
}

TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  dim = maybe_wrap_dim(dim, x.dim());
  int64_t n = x.size(dim);
  if (n == 0) return split_with_sizes(x, std::vector<int64_t>(static_cast<size_t>(chunks), 0), dim);
  return split(x, (n + chunks - 1) / chunks, dim);
}

TensorList unbind(const Tensor& x, int64_t dim) {
  dim = maybe_wrap_dim(dim, x.dim());
  TensorList out;
  for (int64_t i = 0; i < x.size(dim); ++i) out.push_back(select(x, dim, i));
  return out;
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  dim1 = maybe_wrap_dim(dim1, x.dim());
  dim2 = maybe_wrap_dim(dim2, x.dim());
  EMBER_CHECK(dim1 != dim2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t len, start = x.storage_offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(x.size(dim1), x.size(dim2) - offset), 0);
    if (len > 0) start = moved_offset(x, offset, x.stride(dim2));
  } else {
    len = std::max<int64_t>(std::min(x.size(dim1) + offset, x.size(dim2)), 0);
    if (len > 0) start = moved_offset(x, -offset, x.stride(dim1));
  }
  DimVector shape, strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim1 && d != dim2) { shape.push_back(x.size(d)); strides.push_back(x.stride(d)); }
  shape.push_back(len);
  // The two strides' sum overflows only where the diagonal is never stepped along (x empty, or
  // len <= 1 with a huge stride on a one-element dim): 0 serves there.
  int64_t step = 0;
  strides.push_back(__builtin_add_overflow(x.stride(dim1), x.stride(dim2), &step) ? 0 : step);
  auto fn = [offset, dim1, dim2](const Tensor& g) { return g.diagonal(offset, dim1, dim2); };
  return run_view_op(RegionView{"diagonal", fn}, x, make_view(x, shape, strides, start));
}

namespace {
// unfold: element k of window w reads the input at w * step + k along dim. Windows may
// overlap, so the gradient is an index_add of grad (windows and their elements flattened
// into one dim) at those positions: overlapping reads sum.
struct Unfold final : ViewOpBase {
  int64_t dim, size, step;
  Unfold(int64_t d, int64_t s, int64_t st) : dim(d), size(s), step(st) {}
  const char* name() const override { return "unfold"; }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    int64_t windows = grad.size(dim);
    TensorOptions opts = TensorOptions().dtype(kLong).device(grad.device());
    Tensor positions = (arange(windows, opts) * step).unsqueeze(1) + arange(size, opts);
    Tensor g = grad.movedim(-1, dim + 1);  // [..., windows, size, ...]
    DimVector merged(g.sizes());
    merged[dim] = windows * size;
    merged.erase(dim + 1);
    return zeros(s.input_sizes(0), grad.options()).index_add(dim, positions.reshape({-1}), g.reshape(merged));
  }
};
}  // namespace

Tensor unfold(const Tensor& x, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = maybe_wrap_dim(dimension, x.dim());
  int64_t n = x.dim() == 0 ? 1 : x.size(d);
  EMBER_CHECK(size <= n, "maximum size for tensor at dimension ", d, " is ", n, " but size is ", size);
  EMBER_CHECK(step > 0, "step is ", step, " but must be > 0");
  DimVector shape(x.sizes()), strides(x.strides());
  int64_t st = x.dim() == 0 ? 1 : x.stride(d);
  if (x.dim() == 0) { shape.push_back(size); strides.push_back(1); return run_view_op(ViewReshape{}, x, make_view(x, shape, strides, x.storage_offset())); }
  shape[d] = (n - size) / step + 1;
  strides[d] = st * step;
  shape.push_back(size);
  strides.push_back(st);
  return run_view_op(Unfold{d, size, step}, x, make_view(x, shape, strides, x.storage_offset()));
}
Tensor Tensor::unfold(int64_t dimension, int64_t size, int64_t step) const { return ember::unfold(*this, dimension, size, step); }

Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination) {
  EMBER_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (",
              source, " dims) should contain the same number of dims as destination (", destination, " dims)");
  int64_t nd = x.dim();
  auto wrap_unique = [nd](IntArrayRef dims, const char* which) {
    DimVector out;
    for (int64_t d : dims) {
      int64_t w = maybe_wrap_dim(d, nd);
      EMBER_CHECK(std::find(out.begin(), out.end(), w) == out.end(), "movedim: repeated dim in `", which, "` (",
                  dims, ")");
      out.push_back(w);
    }
    return out;
  };
  DimVector src = wrap_unique(source, "source"), dst = wrap_unique(destination, "destination");
  DimVector order(nd, -1);
  std::vector<bool> used(nd, false);
  for (size_t i = 0; i < src.size(); ++i) { order[dst[i]] = src[i]; used[src[i]] = true; }
  int64_t next = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (order[d] != -1) continue;
    while (used[next]) ++next;
    order[d] = next++;
  }
  return permute(x, order);
}

Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, IntArrayRef(source), IntArrayRef(destination));
}

// ---- Tensor methods ----------------------------------------------------------------------
Tensor Tensor::view(IntArrayRef size) const { return ember::view(*this, size); }
Tensor Tensor::reshape(IntArrayRef size) const { return ember::reshape(*this, size); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ember::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const { return ember::unflatten(*this, dim, sizes); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return ember::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return ember::unsqueeze(*this, dim); }
Tensor Tensor::permute(IntArrayRef dims) const { return ember::permute(*this, dims); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return ember::transpose(*this, a, b); }
Tensor Tensor::t() const { return ember::t(*this); }
Tensor Tensor::expand(IntArrayRef size, bool) const { return ember::expand(*this, size); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const { return ember::narrow(*this, dim, start, length); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
TensorList Tensor::chunk(int64_t chunks, int64_t dim) const { return ember::chunk(*this, chunks, dim); }
TensorList Tensor::split(int64_t size, int64_t dim) const { return ember::split(*this, size, dim); }
TensorList Tensor::split(IntArrayRef sizes, int64_t dim) const { return ember::split(*this, sizes, dim); }
TensorList Tensor::split_with_sizes(IntArrayRef sizes, int64_t dim) const { return ember::split_with_sizes(*this, sizes, dim); }
TensorList Tensor::unbind(int64_t dim) const { return ember::unbind(*this, dim); }
Tensor Tensor::movedim(IntArrayRef s, IntArrayRef d) const { return ember::movedim(*this, s, d); }
Tensor Tensor::movedim(int64_t s, int64_t d) const { return ember::movedim(*this, s, d); }
Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> offset) const {
  return ember::as_strided(*this, size, stride, offset);
}
Tensor Tensor::diagonal(int64_t offset, int64_t d1, int64_t d2) const { return ember::diagonal(*this, offset, d1, d2); }

int64_t Tensor::size(int64_t dim) const { return sizes()[maybe_wrap_dim(dim, this->dim(), false)]; }
int64_t Tensor::stride(int64_t dim) const { return strides()[maybe_wrap_dim(dim, this->dim(), false)]; }

}  // namespace ember
