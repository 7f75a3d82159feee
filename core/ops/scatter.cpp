// gather / scatter / scatter_add / index_add: ops that move elements along one dim by an index
// tensor. All run the indexed loops of index_common.h (Note [Indexed loops]); the in-place
// forms (scatter_, scatter_add_, index_add_) write into self through run_inplace_op.
#include "ember/core/autocast.h"
#include "ember/core/deterministic.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/index_common.h"
#include "ember/core/ops/scatter.h"
#include "ember/core/ops/shape.h"
#include "ember/core/shape.h"

namespace ember {
namespace {

using index_detail::as_1d;
using index_detail::byte_step;
using index_detail::restride;

/// t with dim's stride set to 0 and the sizes of `shape`: the walk over the other dims.
Tensor along(const Tensor& t, IntArrayRef shape, int64_t dim) {
  DimVector strides(t.strides());
  strides[dim] = 0;
  return restride(t, shape, strides, t.storage_offset());
}

/// `index` (1-d) seen with `shape`, varying along dim only (index_add walks source's shape).
Tensor index_along(const Tensor& index, IntArrayRef shape, int64_t dim) {
  DimVector strides(shape.size(), 0);
  strides[dim] = index.stride(0);
  return restride(index, shape, strides, index.storage_offset());
}

/// The walk of a scatter: out with dim pinned, over every position p of index, reading src[p].
/// `src` is a tensor at least index's size, or a 0-dim value broadcast to it.
TensorIter scatter_iter(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor dst = as_1d(out), idx = as_1d(index);
  Tensor s = src.dim() == 0 ? src : restride(src, idx.sizes(), as_1d(src).strides(), src.storage_offset());
  return TensorIter(along(dst, idx.sizes(), dim), {s, idx});
}

/// dst[... index[p] ...] = f(dst value, src[p]) for every position p of index (dim `dim`).
template <class Make>
void scatter_kernel(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src, bool serial,
                    Make make_f) {
  TensorIter iter = scatter_iter(out, dim, index, src);
  visit_dtype(out.dtype(), [&]<typename T>() {
    index_detail::scatter_loop<T>(iter, byte_step(out, dim), serial, make_f.template operator()<T>());
  });
}

/// Assignment (scatter) or addition (scatter_add), as a functor per element type.
struct AssignFn {
  template <class T>
  auto operator()() const {
    return [](T, T v) { return v; };
  }
};
struct AddFn {
  template <class T>
  auto operator()() const {
    if constexpr (std::is_same_v<T, bool>)
      return [](bool a, bool v) { return a || v; };
    else
      return
          [](T a, T v) { return static_cast<T>(static_cast<opmath_t<T>>(a) + static_cast<opmath_t<T>>(v)); };
  }
};

/// A gradient shaped like index, zero-padded to src's (larger) shape.
Tensor pad_to(Tensor t, IntArrayRef sizes) {
  if (t.dim() == 0 && !sizes.empty()) t = t.reshape({1});
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == sizes[d]) continue;
    DimVector extra(t.sizes());
    extra[d] = sizes[d] - t.size(d);
    t = cat({t, zeros(extra, t.options())}, d);
  }
  return t;
}

// gather: out[p] = self[p with dim replaced by index[p]]. Each self element gets the sum of
// the gradients of the outputs that read it: scatter_add of grad into zeros.
struct Gather final : UnaryOp {
  int64_t dim;
  Tensor index;
  Gather(int64_t d, Tensor i) : dim(d), index(std::move(i)) {}
  const char* name() const override { return "gather"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_dtype(x.dtype(),
                [&]<typename T>() { index_detail::gather_loop<T>(walk(x, out), byte_step(x, dim)); });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::indexed_gather(walk(x, out), x.dtype(), byte_step(x, dim));
  }
  /// out walked with x's dim pinned, reading index at the same position.
  TensorIter walk(const Tensor& x, Tensor& out) const {
    Tensor idx = as_1d(index);
    return TensorIter(as_1d(out), {along(as_1d(x), idx.sizes(), dim), idx});
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return zeros(s.input_sizes(0), grad.options()).scatter_add(dim, index, grad);
  }
};

// scatter: out = self with out[p with dim replaced by index[p]] = src[p] (or value).
//   d/dself: grad with the overwritten positions zeroed; d/dsrc: grad read back, gather.
// scatter_add: out[...index[p]...] += src[p].  d/dself: grad; d/dsrc: gather of grad.
// elementwise(): out may be self itself (run_inplace_op's in-place path).
struct Scatter final : Op {
  int64_t dim;
  Tensor index;
  std::optional<Scalar> value;  // scatter(value) instead of a src tensor
  bool add;
  Scatter(int64_t d, Tensor i, std::optional<Scalar> v, bool a)
      : dim(d), index(std::move(i)), value(v), add(a) {}
  const char* name() const override { return add ? "scatter_add" : "scatter"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (!out[0].is_same(in[0])) detail::copy_into(out[0], in[0]);
    if (add)
      scatter_kernel(out[0], dim, index, source(in, out), /*serial=*/true, AddFn{});
    else  // Note [Deterministic assignment] (core/ops/index.cpp): serial when asked to be
      scatter_kernel(out[0], dim, index, source(in, out),
                     /*serial=*/racy() && are_deterministic_algorithms_enabled(), AssignFn{});
  }
  // scatter_add is deterministic on CUDA (Note [Deterministic indexed accumulation]); scatter
  // from a src tensor is not (Note [Deterministic assignment]).
  void cuda(const TensorList& in, TensorList& out) const override {
    if (racy() && are_deterministic_algorithms_enabled() && index_detail::repeats_along(index, dim))
      ::ember::detail::alert_not_deterministic("scatter with a src tensor and repeated indices on CUDA");
    if (!out[0].is_same(in[0])) detail::copy_into(out[0], in[0]);
    cuda::indexed_scatter(scatter_iter(out[0], dim, index, source(in, out)), out[0], byte_step(out[0], dim),
                          add ? cuda::ScatterFn::kAdd : cuda::ScatterFn::kAssign);
  }
  /// Whether repeated indices make the result depend on which write lands last.
  bool racy() const { return !add && !value && index.numel() > 1; }
  Tensor source(const TensorList& in, const TensorList& out) const {
    return value ? full({}, *value, out[0].options()) : in[1];
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    TensorList grads(s.num_inputs());
    if (s.needs_grad(0)) grads[0] = add ? g[0] : g[0].scatter(dim, index, 0);
    if (s.num_inputs() > 1 && s.needs_grad(1)) grads[1] = pad_to(g[0].gather(dim, index), s.input_sizes(1));
    return grads;
  }
};

// index_add: out = self; out.select(dim, index[i]) += alpha * source.select(dim, i).
//   d/dself: grad; d/dsource: alpha * grad.index_select(dim, index).
struct IndexAdd final : Op {
  int64_t dim;
  Tensor index;  // int64, 1-d
  Scalar alpha;
  IndexAdd(int64_t d, Tensor i, Scalar a) : dim(d), index(std::move(i)), alpha(a) {}
  const char* name() const override { return "index_add"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (!out[0].is_same(in[0])) detail::copy_into(out[0], in[0]);
    TensorIter iter = walk(in, out);
    visit_dtype(out[0].dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      int64_t step = byte_step(out[0], dim);
      if constexpr (std::is_same_v<T, bool>) {
        bool a = alpha.toBool();
        index_detail::scatter_loop<T>(iter, step, true, [a](bool x, bool v) { return x || (a && v); });
      } else {
        M a = alpha.to<M>();
        index_detail::scatter_loop<T>(iter, step, true, [a](T x, T v) {
          return static_cast<T>(static_cast<M>(x) + a * static_cast<M>(v));
        });
      }
    });
  }
  // Deterministic on CUDA too (Note [Deterministic indexed accumulation]).
  void cuda(const TensorList& in, TensorList& out) const override {
    if (!out[0].is_same(in[0])) detail::copy_into(out[0], in[0]);
    cuda::indexed_scatter(walk(in, out), out[0], byte_step(out[0], dim), cuda::ScatterFn::kAdd, alpha);
  }
  /// out with dim pinned, walked over source's shape; index varies along dim only.
  TensorIter walk(const TensorList& in, const TensorList& out) const {
    Tensor dst = as_1d(out[0]), src = as_1d(in[1]);
    return TensorIter(along(dst, src.sizes(), dim), {src, index_along(index, src.sizes(), dim)});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gsrc;
    if (s.needs_grad(1)) {
      gsrc = g[0].index_select(dim, index);
      if (alpha.toDouble() != 1.0) gsrc = gsrc * alpha;
    }
    return {g[0], gsrc};
  }
};

int64_t dims_at_least_1(const Tensor& t) { return std::max<int64_t>(t.dim(), 1); }
int64_t size_or_1(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }

/// index values in [0, size of self's dim), as gather/scatter require (no negative indices).
void check_index_range(const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t size = size_or_1(self, dim);
  auto bad = index_detail::first_out_of_range(index, 0, size);
  EMBER_CHECK(!bad, "index ", bad.value_or(0), " is out of bounds for dimension ", dim, " with size ", size);
}

/// PyTorch's scatter checks; `src` undefined for scatter(value).
void check_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::check_same_device({self, index, src}, "scatter");
  EMBER_CHECK(index.dtype() == kLong, "scatter(): Expected dtype int64 for index");
  if (src.defined())
    EMBER_CHECK(src.dtype() == self.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  EMBER_CHECK(dims_at_least_1(index) == dims_at_least_1(self),
              "Index tensor must have the same number of dimensions as self tensor");
  if (src.defined())
    EMBER_CHECK(dims_at_least_1(index) == dims_at_least_1(src),
                "Index tensor must have the same number of dimensions as src tensor");
  bool ok = true;
  for (int64_t d = 0; d < dims_at_least_1(index); ++d) {
    int64_t n = size_or_1(index, d);
    if (d != dim && n > size_or_1(self, d)) ok = false;
    if (src.defined() && n > size_or_1(src, d)) ok = false;
  }
  if (src.defined())
    EMBER_CHECK(ok, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim, " and to be smaller size than src ", src.sizes());
  else
    EMBER_CHECK(ok, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim);
  check_index_range(self, dim, index);
}

/// PyTorch's index_add checks; returns index as 1-d int64.
Tensor check_index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  detail::check_same_device({self, index, source}, "index_add");
  EMBER_CHECK(index.dim() <= 1, "index_add_(): Index is supposed to be a vector, but got dim: ", index.dim(),
              " with type: ", scalar_type_name(index.dtype()), " and size: ", index.sizes());
  EMBER_CHECK(
      index.dtype() == kLong || index.dtype() == kInt,
      "index_add_(): Expected dtype int32/int64 for index but got: ", scalar_type_name(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "index_add_(): self (", scalar_type_name(self.dtype()),
              ") and source (", scalar_type_name(source.dtype()), ") must have the same scalar type");
  bool same_shape = dims_at_least_1(self) == dims_at_least_1(source);
  for (int64_t d = 0; same_shape && d < dims_at_least_1(self); ++d)
    same_shape = d == dim || size_or_1(self, d) == size_or_1(source, d);
  EMBER_CHECK(same_shape,
              "index_add_(): source tensor shape must match self tensor shape, excluding the specified "
              "dimension. Got self.shape = ",
              self.sizes(), " source.shape = ", source.sizes());
  Tensor idx = index.reshape({-1}).to(kLong);
  EMBER_CHECK(idx.numel() == size_or_1(source, dim), "index_add_(): Number of indices (", idx.numel(),
              ") should be equal to source.size(dim): (", size_or_1(source, dim), "), for dim: ", dim);
  EMBER_CHECK(!index_detail::first_out_of_range(idx, 0, size_or_1(self, dim)), "index out of range in self");
  return idx;
}

OutSpec same_as(const Tensor& t) { return OutSpec{DimVector(t.sizes()), t.dtype()}; }

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  detail::check_same_device({self, index}, "gather");
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(dims_at_least_1(index) == dims_at_least_1(self),
              "Index tensor must have the same number of dimensions as input tensor");
  EMBER_CHECK(index.dtype() == kLong, "gather(): Expected dtype int64 for index");
  for (int64_t d = 0; d < index.dim(); ++d)
    EMBER_CHECK(d == dim || index.size(d) <= size_or_1(self, d), "Size does not match at dimension ", d,
                " expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim);
  check_index_range(self, dim, index);
  return run_op(Gather{dim, index}, {self}, OutSpec{DimVector(index.sizes()), self.dtype()});
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_scatter(self, dim, index, src);
  return run_op(Scatter{dim, index, std::nullopt, false}, {self, src}, same_as(self));
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_scatter(self, dim, index, Tensor());
  return run_op(Scatter{dim, index, value, false}, {self}, same_as(self));
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  // On CUDA's promote list (scatter and scatter_reduce are on none).
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kPromoteCudaOnly, &scatter_add, self, dim, index, src);
  dim = maybe_wrap_dim(dim, self.dim());
  check_scatter(self, dim, index, src);
  return run_op(Scatter{dim, index, std::nullopt, true}, {self, src}, same_as(self));
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha) {
  dim = maybe_wrap_dim(dim, self.dim());
  Tensor idx = check_index_add(self, dim, index, source);
  return run_op(IndexAdd{dim, idx, alpha}, {self, source}, same_as(self));
}

// ---- Tensor methods ----------------------------------------------------------------------
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return ember::gather(*this, dim, index); }
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::scatter(*this, dim, index, value);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  dim = maybe_wrap_dim(dim, this->dim());
  check_scatter(*this, dim, index, src);
  return run_inplace_op(Scatter{dim, index, std::nullopt, false}, *this, {*this, src});
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) {
  dim = maybe_wrap_dim(dim, this->dim());
  check_scatter(*this, dim, index, Tensor());
  return run_inplace_op(Scatter{dim, index, value, false}, *this, {*this});
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  dim = maybe_wrap_dim(dim, this->dim());
  check_scatter(*this, dim, index, src);
  return run_inplace_op(Scatter{dim, index, std::nullopt, true}, *this, {*this, src});
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return ember::index_add(*this, dim, index, source, alpha);
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  dim = maybe_wrap_dim(dim, this->dim());
  Tensor idx = check_index_add(*this, dim, index, source);
  return run_inplace_op(IndexAdd{dim, idx, alpha}, *this, {*this, source});
}

}  // namespace ember
