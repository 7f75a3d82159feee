// Indexing with libtorch's TensorIndex (x.index({Slice(), 0, None, Ellipsis, mask, idx})),
// advanced indexing with index tensors (index, index_put_), index_select, masked_select and
// nonzero. Basic indices (integers, slices, None, Ellipsis) become view ops, so their results
// alias the input; index tensors then run one Index op that copies (Note [Advanced indexing]).
// gather/scatter/index_add are in scatter.cpp.
#include "ember/core/ops/index.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ember/core/autocast.h"
#include "ember/core/deterministic.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index_common.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/core/shape.h"

namespace ember {

using index_detail::restride;

namespace indexing {

// libtorch's defaults: a missing start/stop means "from the beginning"/"to the end", read
// from the far side when step is negative (which slicing then rejects, as libtorch does).
Slice::Slice(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  step_ = step.value_or(1);
  EMBER_CHECK(step_ != 0, "slice step cannot be zero");
  start_ = start.value_or(step_ < 0 ? kMax : 0);
  stop_ = stop.value_or(step_ < 0 ? kMin : kMax);
}

TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  EMBER_CHECK(std::strcmp(s, "...") == 0, "Expected \"...\" to represent an ellipsis index, but got \"", s,
              "\"");
}

}  // namespace indexing

namespace {

using indexing::TensorIndex;
using OptionalTensors = std::vector<std::optional<Tensor>>;

bool is_mask(const Tensor& t) { return t.dtype() == kBool || t.dtype() == kByte; }

/// Note [Advanced indexing]
/// Index tensors (after masks became their nonzero() columns) broadcast to one shape B.
/// If they index adjacent dims, the result is self's dims before them, then B, then the dims
/// after them; if a plain dim separates two of them, B goes first (numpy's rule). Either way
/// the indexed dims are brought together by a permutation `order` of self's dims, and each
/// result element reads self at (its position in the other dims) + offset, where
/// offset = sum_j wrap(idx_j) * stride(indexed dim j) is computed once per element of B.
struct IndexPlan {
  DimVector order;          // self's dims, indexed ones contiguous from `start`
  int64_t start = 0;        // first indexed position in `order`
  std::vector<Tensor> idx;  // the defined (int64) index tensors, in order
  DimVector index_shape;    // B
  DimVector out_shape;
};

std::string shapes_text(const std::vector<Tensor>& ts) {
  std::string out;
  for (size_t i = 0; i < ts.size(); ++i) out += detail::str_cat(i ? ", " : "", ts[i].sizes());
  return out;
}

/// The shape all index tensors broadcast to, with PyTorch's error naming every shape.
DimVector broadcast_index_shapes(const std::vector<Tensor>& idx) {
  DimVector b;
  for (const Tensor& t : idx) {
    int64_t n = std::max<int64_t>(b.size(), t.dim());
    DimVector merged(n, 1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t x = i < n - static_cast<int64_t>(b.size()) ? 1 : b[i - (n - b.size())];
      int64_t y = i < n - t.dim() ? 1 : t.size(i - (n - t.dim()));
      EMBER_CHECK(x == y || x == 1 || y == 1,
                  "shape mismatch: indexing tensors could not be broadcast together with shapes ",
                  shapes_text(idx));
      merged[i] = x == 1 ? y : x;
    }
    b = merged;
  }
  return b;
}

IndexPlan plan_index(IntArrayRef sizes, const OptionalTensors& indices) {
  int64_t nd = static_cast<int64_t>(sizes.size());
  EMBER_CHECK(static_cast<int64_t>(indices.size()) <= nd, "too many indices for tensor of dimension ", nd,
              " (got ", indices.size(), ")");
  IndexPlan p;
  DimVector indexed, rest;
  for (int64_t d = 0; d < nd; ++d) {
    bool defined = d < static_cast<int64_t>(indices.size()) && indices[d].has_value();
    if (defined) {
      indexed.push_back(d);
      p.idx.push_back(*indices[d]);
    }
  }
  bool adjacent = indexed.empty() || indexed.back() - indexed[0] + 1 == static_cast<int64_t>(indexed.size());
  p.start = adjacent && !indexed.empty() ? indexed[0] : 0;
  for (int64_t d = 0; d < nd; ++d) {
    bool is_indexed = std::find(indexed.begin(), indexed.end(), d) != indexed.end();
    if (!is_indexed) rest.push_back(d);
  }
  for (int64_t i = 0; i < p.start; ++i) p.order.push_back(rest[i]);
  for (int64_t d : indexed) p.order.push_back(d);
  for (size_t i = p.start; i < rest.size(); ++i) p.order.push_back(rest[i]);
  p.index_shape = broadcast_index_shapes(p.idx);
  int64_t k = static_cast<int64_t>(indexed.size());
  for (int64_t i = 0; i < p.start; ++i) p.out_shape.push_back(sizes[p.order[i]]);
  for (int64_t s : p.index_shape) p.out_shape.push_back(s);
  for (int64_t i = p.start + k; i < nd; ++i) p.out_shape.push_back(sizes[p.order[i]]);
  return p;
}

/// Element offsets into `base` for each element of B; checks every index against its dim.
/// (Only base's sizes and strides are read, so base may live on any device.)
Tensor index_offsets_cpu(const Tensor& base, const IndexPlan& p) {
  Tensor offsets = zeros(p.index_shape, kLong);
  for (size_t j = 0; j < p.idx.size(); ++j) {
    int64_t d = p.order[p.start + j], size = base.size(d), stride = base.stride(d);
    Tensor idx = p.idx[j].expand(p.index_shape);
    TensorIter iter(offsets, {idx});
    iter.serial_for_each([&](char** data, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = *reinterpret_cast<const int64_t*>(data[1] + i * s[1]);
        EMBER_CHECK(size > 0, "index is out of bounds for dimension with size 0");
        EMBER_CHECK(v >= -size && v < size, "index ", v, " is out of bounds for dimension ", j, " with size ",
                    size);
        *reinterpret_cast<int64_t*>(data[0] + i * s[0]) += (v < 0 ? v + size : v) * stride;
      }
    });
  }
  return offsets;
}

/// The same on base's CUDA device. The kernel only flags a bad index; then the check is
/// redone on the host, which raises the CPU path's error for the first bad value.
Tensor index_offsets_cuda(const Tensor& base, const IndexPlan& p) {
  Tensor offsets = zeros(p.index_shape, TensorOptions().dtype(kLong).device(base.device()));
  TensorList idx;
  DimVector sizes, strides;
  for (size_t j = 0; j < p.idx.size(); ++j) {
    int64_t d = p.order[p.start + j];
    idx.push_back(p.idx[j].expand(p.index_shape));
    sizes.push_back(base.size(d));
    strides.push_back(base.stride(d));
  }
  if (cuda::add_index_offsets(offsets, idx, sizes, strides)) return offsets;
  IndexPlan host = p;
  for (Tensor& t : host.idx) t = t.to(Device(kCPU));
  index_offsets_cpu(base, host);  // raises
  EMBER_CHECK(false, "internal error: the CUDA index check and the CPU one disagree");
  return offsets;
}

Tensor index_offsets(const Tensor& base, const IndexPlan& p) {
  return base.is_cuda() ? index_offsets_cuda(base, p) : index_offsets_cpu(base, p);
}

/// `base` seen with the result's shape: B's dims have stride 0 (the offsets supply them).
Tensor indexed_view(const Tensor& base, const IndexPlan& p) {
  int64_t k = static_cast<int64_t>(p.idx.size()), nd = base.dim();
  DimVector strides;
  for (int64_t i = 0; i < p.start; ++i) strides.push_back(base.stride(p.order[i]));
  for (size_t i = 0; i < p.index_shape.size(); ++i) strides.push_back(0);
  for (int64_t i = p.start + k; i < nd; ++i) strides.push_back(base.stride(p.order[i]));
  return restride(base, p.out_shape, strides, base.storage_offset());
}

/// The offsets seen with the result's shape (stride 0 outside B's dims).
Tensor offsets_view(const Tensor& offsets, const IndexPlan& p) {
  DimVector strides(p.start, 0);
  for (int64_t s : offsets.strides()) strides.push_back(s);
  strides.resize(p.out_shape.size(), 0);
  return restride(offsets, p.out_shape, strides, offsets.storage_offset());
}

/// out = x[indices], on x's device (CPU or CUDA: the geometry is the same).
void index_kernel(const Tensor& x, const OptionalTensors& indices, Tensor& out) {
  IndexPlan p = plan_index(x.sizes(), indices);
  Tensor offsets = index_offsets(x, p);
  TensorIter iter(out, {indexed_view(x, p), offsets_view(offsets, p)});
  if (out.is_cuda()) {
    cuda::indexed_gather(iter, x.dtype(), x.element_size());
    return;
  }
  visit_dtype(x.dtype(), [&]<typename T>() { index_detail::gather_loop<T>(iter, x.element_size()); });
}

/// dst[indices] = value (or += value), on dst's device. On CUDA the accumulation is
/// deterministic (Note [Deterministic indexed accumulation] in cuda/scatter.cu).
void index_put_kernel(Tensor& dst, const OptionalTensors& indices, const Tensor& value, bool accumulate) {
  IndexPlan p = plan_index(dst.sizes(), indices);
  Tensor offsets = index_offsets(dst, p);
  TensorIter iter(indexed_view(dst, p), {value, offsets_view(offsets, p)});
  // Note [Deterministic assignment]
  // With repeated indices, several elements of a multi-element value land on one destination
  // and the last write wins; which write is last is a race on CUDA and in the CPU's parallel
  // loop. (A one-element value writes the same bits whichever wins.) In deterministic mode the
  // CPU runs the loop serially, so the iterator's last write wins, as with one thread. CUDA
  // has no ordered assignment kernel: there deterministic mode checks the indices for repeats
  // (distinct destinations cannot race: masks, the distinct rows of embedding_renorm_) and
  // alerts when it finds some. PyTorch sorts instead and lets the last write win.
  const bool racy = !accumulate && value.numel() > 1;
  if (dst.is_cuda()) {
    if (racy && are_deterministic_algorithms_enabled() &&
        index_detail::repeats_along(offsets.reshape({-1}), 0))
      ::ember::detail::alert_not_deterministic(
          "index_put_ with accumulate=False and repeated indices on CUDA");
    cuda::indexed_scatter(iter, dst, dst.element_size(),
                          accumulate ? cuda::ScatterFn::kAdd : cuda::ScatterFn::kAssign);
    return;
  }
  visit_dtype(dst.dtype(), [&]<typename T>() {
    if (!accumulate) {
      const bool serial = racy && are_deterministic_algorithms_enabled();
      index_detail::scatter_loop<T>(iter, dst.element_size(), serial, [](T, T v) { return v; });
    } else if constexpr (std::is_same_v<T, bool>) {
      index_detail::scatter_loop<T>(iter, dst.element_size(), true, [](bool a, bool v) { return a || v; });
    } else {
      index_detail::scatter_loop<T>(iter, dst.element_size(), true, [](T a, T v) {
        return static_cast<T>(static_cast<opmath_t<T>>(a) + static_cast<opmath_t<T>>(v));
      });
    }
  });
}

// index: out = self[indices] (Note [Advanced indexing]). Each element of self receives the
// sum of the gradients of the outputs that read it, repeated indices included: an
// accumulating index_put of grad into zeros.
struct Index final : UnaryOp {
  OptionalTensors indices;
  explicit Index(OptionalTensors i) : indices(std::move(i)) {}
  const char* name() const override { return "index"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override { index_kernel(x, indices, out); }
  void cuda(const Tensor& x, Tensor& out) const override { index_kernel(x, indices, out); }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return index_put(zeros(s.input_sizes(0), grad.options()), indices, grad, /*accumulate=*/true);
  }
};

// index_put: self[indices] = value (or += with accumulate). d/dself: grad with the written
// positions zeroed (kept when accumulating); d/dvalue: grad[indices], summed back over the
// dims value was broadcast along (the engine does that).
// elementwise() here means what run_inplace_op needs: out may be in[0] itself.
struct IndexPut final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kPromoteCudaOnly;
  OptionalTensors indices;
  bool accumulate;
  IndexPut(OptionalTensors i, bool acc) : indices(std::move(i)), accumulate(acc) {}
  const char* name() const override { return "index_put"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override { forward(in, out); }
  void cuda(const TensorList& in, TensorList& out) const override { forward(in, out); }
  void forward(const TensorList& in, TensorList& out) const {
    if (!out[0].is_same(in[0])) detail::copy_into(out[0], in[0]);
    index_put_kernel(out[0], indices, in[1], accumulate);
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gself, gvalue;
    if (s.needs_grad(0))
      gself = accumulate ? g[0] : index_put(g[0], indices, zeros({}, g[0].options()), false);
    if (s.needs_grad(1)) gvalue = index(g[0], indices);
    return {gself, gvalue};
  }
};

/// Index tensors as int64 on self's device, with each bool/byte mask replaced by its nonzero()
/// columns (one per mask dim) after checking the mask's shape against the dims it covers.
/// As in PyTorch, CPU indices may index a CUDA tensor (they are copied over).
OptionalTensors expand_indices(const Tensor& self, const OptionalTensors& indices) {
  OptionalTensors out;
  for (const auto& entry : indices) {
    if (!entry || !entry->defined()) {
      out.emplace_back();
      continue;
    }
    ScalarType dt = entry->dtype();
    EMBER_CHECK(dt == kLong || dt == kInt || is_mask(*entry),
                "tensors used as indices must be long, int, byte or bool tensors");
    EMBER_CHECK(entry->device() == self.device() || entry->is_cpu(),
                "indices should be either on cpu or on the same device as the indexed tensor (",
                self.device(), ")");
    Tensor t = entry->to(self.device());
    if (!is_mask(t)) {
      out.emplace_back(t.to(kLong));
      continue;
    }
    int64_t first = static_cast<int64_t>(out.size());
    EMBER_CHECK(first + t.dim() <= self.dim(), "too many indices for tensor of dimension ", self.dim());
    for (int64_t j = 0; j < t.dim(); ++j)
      EMBER_CHECK(t.size(j) == self.size(first + j), "The shape of the mask ", t.sizes(), " at index ", j,
                  " does not match the shape of the indexed tensor ", self.sizes(), " at index ", first + j);
    Tensor nz = nonzero(t);
    for (int64_t j = 0; j < t.dim(); ++j) out.emplace_back(nz.select(1, j));
  }
  return out;
}

/// value must broadcast to the indexing result's shape.
void check_value_shape(const Tensor& value, IntArrayRef result) {
  bool ok = value.dim() <= static_cast<int64_t>(result.size());
  for (int64_t i = 1; ok && i <= value.dim(); ++i) {
    int64_t v = value.size(-i), r = result[result.size() - i];
    ok = v == r || v == 1;
  }
  EMBER_CHECK(ok, "shape mismatch: value tensor of shape ", value.sizes(),
              " cannot be broadcast to indexing result of shape ", result);
}

void check_put_dtype(const Tensor& self, const Tensor& value) {
  EMBER_CHECK(value.dtype() == self.dtype(),
              "Index put requires the source and destination dtypes match, got ",
              scalar_type_name(self.dtype()), " for the destination and ", scalar_type_name(value.dtype()),
              " for the source.");
}

// ---- TensorIndex: libtorch's applySlicing ---------------------------------------------------

/// The view left after the basic indices, and the index tensors aligned with its dims.
struct Sliced {
  Tensor view;
  OptionalTensors tensors;
};

/// A bool index adds a dim of size 1 and keeps it (true) or empties it (false).
Tensor bool_index(bool b) { return b ? zeros({1}, kLong) : empty({0}, kLong); }

Tensor select_checked(const Tensor& t, int64_t dim, int64_t i, int64_t real_dim) {
  EMBER_CHECK(t.dim() > 0,
              "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
              "C++ to convert a 0-dim tensor to a number");
  int64_t size = t.size(dim);
  EMBER_CHECK(i >= -size && i < size, "index ", i, " is out of bounds for dimension ", real_dim,
              " with size ", size);
  return t.select(dim, i);
}

/// Dims of self an index consumes: integers, slices and index tensors one each, a mask one per
/// dim of its own; None, Ellipsis and bools none.
int64_t consumed_dims(const TensorIndex& idx) {
  if (idx.is_integer() || idx.is_slice()) return 1;
  if (!idx.is_tensor()) return 0;
  const Tensor& t = idx.tensor();
  if (is_mask(t)) return t.dim();
  return 1;
}

Sliced apply_slicing(const Tensor& self, ArrayRef<TensorIndex> indices) {
  if (indices.size() == 1 && indices[0].is_integer())
    return {select_checked(self, 0, indices[0].integer(), 0), {}};
  int64_t specified = 0, ellipses = 0;
  for (const TensorIndex& idx : indices) {
    specified += consumed_dims(idx);
    ellipses += idx.is_ellipsis();
  }
  EMBER_CHECK(ellipses <= 1, "an index can only have a single ellipsis ('...')");
  EMBER_CHECK(specified <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Sliced s{self, {}};
  int64_t dim = 0, real_dim = 0, covered = 0;  // covered: result dims the tensor list spans
  auto record = [&](const Tensor& t, int64_t dims) {
    for (; covered < dim; ++covered) s.tensors.emplace_back();
    s.tensors.emplace_back(t);
    covered += dims;
    dim += dims;
  };
  for (const TensorIndex& idx : indices) {
    switch (idx.kind()) {
      case TensorIndex::Kind::Integer:
        s.view = select_checked(s.view, dim, idx.integer(), real_dim++);
        break;
      case TensorIndex::Kind::Slice: {
        const indexing::Slice& sl = idx.slice();
        EMBER_CHECK(sl.step() > 0, "step must be greater than zero");
        s.view = s.view.slice(dim++, sl.start(), sl.stop(), sl.step());
        ++real_dim;
        break;
      }
      case TensorIndex::Kind::None:
        s.view = s.view.unsqueeze(dim++);
        break;
      case TensorIndex::Kind::Ellipsis:
        dim += self.dim() - specified;
        real_dim += self.dim() - specified;
        break;
      case TensorIndex::Kind::Boolean:
        s.view = s.view.unsqueeze(dim);
        record(bool_index(idx.boolean()), 1);
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = idx.tensor();
        EMBER_CHECK(t.defined(), "index(): an undefined tensor cannot be used as an index");
        if (t.dim() == 0 && is_integral(t.dtype(), true)) {
          // A 0-dim integer tensor acts as a Python int (a view); a 0-dim bool as a bool.
          if (!is_mask(t)) {
            s.view = select_checked(s.view, dim, t.item<int64_t>(), real_dim++);
          } else {
            s.view = s.view.unsqueeze(dim);
            record(bool_index(t.item<bool>()), 1);
          }
          break;
        }
        int64_t dims = consumed_dims(idx);
        record(t, dims);
        real_dim += dims;
        break;
      }
    }
  }
  return s;
}

/// libtorch strips leading size-1 dims of an assigned value (x[0] = ones({1, 3}) works).
Tensor strip_leading_ones(const Tensor& value) {
  int64_t lead = 0;
  while (lead < value.dim() && value.size(lead) == 1) ++lead;
  if (lead == 0) return value;
  DimVector shape;
  shape.assign(value.sizes().begin() + lead, value.sizes().end());
  return value.view(shape);
}

/// x.index({...}): libtorch's get_item.
Tensor get_item(const Tensor& self, ArrayRef<TensorIndex> indices) {
  Sliced s = apply_slicing(self, indices);
  if (!s.tensors.empty()) return index(s.view, s.tensors);
  // Basic indexing always gives a new view, even when nothing was indexed (x[...]).
  return s.view.is_same(self) ? self.view(self.sizes()) : s.view;
}

/// x.index_put_({...}, value): libtorch's set_item.
void set_item(const Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& value) {
  Sliced s = apply_slicing(self, indices);
  Tensor v = strip_leading_ones(value);
  if (s.tensors.empty())
    s.view.copy_(v);
  else
    index_put_(s.view, s.tensors, v);
}

}  // namespace

Tensor index(const Tensor& self, const OptionalTensors& indices) {
  OptionalTensors idx = expand_indices(self, indices);
  IndexPlan p = plan_index(self.sizes(), idx);
  return run_op(Index{std::move(idx)}, {self}, OutSpec{p.out_shape, self.dtype()});
}

namespace {
/// As in PyTorch, a 0-dim value may come from another device (a CPU scalar into a CUDA
/// tensor); any other value must be on self's device.
Tensor value_on_device(const Tensor& self, const Tensor& value) {
  return value.device() != self.device() && value.dim() == 0 ? value.to(self.device()) : value;
}
}  // namespace

Tensor& index_put_(Tensor& self, const OptionalTensors& indices, const Tensor& value, bool accumulate) {
  check_put_dtype(self, value);
  OptionalTensors idx = expand_indices(self, indices);
  check_value_shape(value, plan_index(self.sizes(), idx).out_shape);
  return run_inplace_op(IndexPut{std::move(idx), accumulate}, self, {self, value_on_device(self, value)});
}

Tensor index_put(const Tensor& self, const OptionalTensors& indices, const Tensor& value, bool accumulate) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(IndexPut::kAutocast, &index_put, self, indices, value, accumulate);
  check_put_dtype(self, value);
  OptionalTensors idx = expand_indices(self, indices);
  check_value_shape(value, plan_index(self.sizes(), idx).out_shape);
  return run_op(IndexPut{std::move(idx), accumulate}, {self, value_on_device(self, value)},
                OutSpec{DimVector(self.sizes()), self.dtype()});
}

// ---- index_select, masked_select, nonzero -----------------------------------------------------
namespace {

// index_select: out = self with dim replaced by self[index[i]]. Gradient: grad rows added
// back into the rows they came from (index_add into zeros).
struct IndexSelect final : UnaryOp {
  int64_t dim;
  Tensor index;  // int64, 1-d
  IndexSelect(int64_t d, Tensor i) : dim(d), index(std::move(i)) {}
  const char* name() const override { return "index_select"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_dtype(x.dtype(), [&]<typename T>() { index_detail::gather_loop<T>(walk(x, out), step(x)); });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::indexed_gather(walk(x, out), x.dtype(), step(x));
  }
  /// out walked with x's dim pinned to row 0 and index along dim (Note [Indexed loops]).
  TensorIter walk(const Tensor& x, Tensor& out) const {
    Tensor src = index_detail::as_1d(x), dst = index_detail::as_1d(out);
    DimVector src_strides(src.strides()), idx_strides(dst.dim(), 0);
    src_strides[dim] = 0;
    idx_strides[dim] = index.stride(0);
    return TensorIter(dst, {restride(src, dst.sizes(), src_strides, src.storage_offset()),
                            restride(index, dst.sizes(), idx_strides, index.storage_offset())});
  }
  int64_t step(const Tensor& x) const { return index_detail::byte_step(x, dim); }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return zeros(s.input_sizes(0), grad.options()).index_add(dim, index, grad);
  }
};

// masked_select: self (broadcast with mask) at the mask's true positions, in row-major order.
// Gradient: grad put back at those positions, summed over the broadcast dims.
struct MaskedSelect final : UnaryOp {
  DimVector shape;          // broadcast shape of self and mask
  OptionalTensors indices;  // the mask's nonzero() columns
  MaskedSelect(DimVector s, OptionalTensors i) : shape(std::move(s)), indices(std::move(i)) {}
  const char* name() const override { return "masked_select"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override { forward(x, out); }
  void cuda(const Tensor& x, Tensor& out) const override { forward(x, out); }
  /// x broadcast to `shape` (stride 0 where it broadcasts), indexed on its own device.
  void forward(const Tensor& x, Tensor& out) const {
    DimVector strides(shape.size(), 0);
    int64_t lead = static_cast<int64_t>(shape.size()) - x.dim();
    for (int64_t d = 0; d < x.dim(); ++d) strides[lead + d] = x.size(d) == 1 ? 0 : x.stride(d);
    index_kernel(restride(x, shape, strides, x.storage_offset()), indices, out);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    Tensor full_grad = index_put(zeros(shape, grad.options()), indices, grad, /*accumulate=*/true);
    return sum_to_size(full_grad, s.input_sizes(0));
  }
};

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  EMBER_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  detail::check_same_device({self, index}, "index_select");
  dim = maybe_wrap_dim(dim, self.dim());
  Tensor idx = index.reshape({-1}).to(kLong);
  DimVector shape(self.sizes());
  if (self.dim() == 0) {
    EMBER_CHECK(idx.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ", idx.numel(),
                " value(s)");
  } else {
    shape[dim] = idx.numel();
  }
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  EMBER_CHECK(!index_detail::first_out_of_range(idx, 0, size), "index out of range in self");
  return run_op(IndexSelect{dim, idx}, {self}, OutSpec{shape, self.dtype()});
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(is_mask(mask), "masked_select: expected BoolTensor or ByteTensor for mask");
  detail::check_same_device({self, mask}, "masked_select");
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  Tensor nz = nonzero(mask.expand(shape));
  OptionalTensors indices;
  for (int64_t j = 0; j < nz.size(1); ++j) indices.emplace_back(nz.select(1, j));
  DimVector out_shape{nz.size(0)};
  return run_op(MaskedSelect{shape, std::move(indices)}, {self}, OutSpec{out_shape, self.dtype()});
}

Tensor nonzero(const Tensor& self) {
  if (self.is_cuda()) return cuda::nonzero(self.detach());
  Tensor x = self.detach().to(Device(kCPU)).contiguous();
  int64_t nd = x.dim(), n = x.numel(), count = 0;
  std::vector<uint8_t> hit(static_cast<size_t>(n));
  visit_dtype(x.dtype(), [&]<typename T>() {
    const T* p = static_cast<const T*>(x.data_ptr());
    for (int64_t i = 0; i < n; ++i) count += hit[i] = static_cast<opmath_t<T>>(p[i]) != opmath_t<T>(0);
  });
  Tensor out = empty({count, nd}, kLong);
  int64_t* o = out.data_ptr<int64_t>();
  DimVector pos(nd, 0);  // the multi-index of element i, advanced like an odometer
  for (int64_t i = 0; i < n; ++i) {
    if (hit[i]) o = std::copy(pos.begin(), pos.end(), o);
    for (int64_t d = nd - 1; d >= 0 && ++pos[d] == x.size(d); --d) pos[d] = 0;
  }
  return out.to(self.device());
}

// ---- Tensor methods ----------------------------------------------------------------------
Tensor Tensor::index(ArrayRef<TensorIndex> indices) const { return get_item(*this, indices); }
Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return get_item(*this, ArrayRef<TensorIndex>(indices));
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& v) {
  set_item(*this, indices, v);
  return *this;
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& v) {
  set_item(*this, indices, full({}, v, options()));
  return *this;
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& v) {
  return index_put_(ArrayRef<TensorIndex>(indices), v);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& v) {
  return index_put_(ArrayRef<TensorIndex>(indices), v);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }

}  // namespace ember
