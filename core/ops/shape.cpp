// Copying shape ops: cat/stack, repeat, flip, roll, tril/triu. Each builds its output from
// strided views of the output and inputs and copies between them (detail::copy_into does the
// casting and the CPU/CUDA dispatch), so most of them need no kernel of their own; tril/triu's
// mask has one (cuda/tril.cu).
// The view ops (view, permute, narrow, ...) are in views.cpp.
#include <algorithm>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/tril.h"

namespace ember {
namespace {

/// A view of t's storage with the given geometry, outside autograd (for kernels only).
Tensor restride(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return Tensor(
      intrusive_ptr<TensorImpl>::make(t.unsafeGetTensorImpl()->storage(), t.dtype(), sizes, strides, offset));
}

/// t.narrow(dim, start, len) without autograd bookkeeping.
Tensor narrow_raw(const Tensor& t, int64_t dim, int64_t start, int64_t len) {
  DimVector sizes(t.sizes());
  sizes[dim] = len;
  return restride(t, sizes, t.strides(), t.storage_offset() + start * t.stride(dim));
}

/// t.select(dim, i) without autograd bookkeeping.
Tensor select_raw(const Tensor& t, int64_t dim, int64_t i) {
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes.erase(dim);
  strides.erase(dim);
  return restride(t, sizes, strides, t.storage_offset() + i * t.stride(dim));
}

/// PyTorch skips 1-d empty tensors in cat whatever the other inputs' shapes (legacy behaviour).
bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

// cat: out = [in0; in1; ...] along dim. The gradient of each input is its slice of grad.
struct Cat final : Op {
  int64_t dim;
  explicit Cat(int64_t d) : dim(d) {}
  const char* name() const override { return "cat"; }
  Save saves() const override { return Save::kNothing; }
  void run(const TensorList& in, TensorList& out) const {
    int64_t offset = 0;
    for (const Tensor& t : in) {
      if (skipped_in_cat(t)) continue;
      Tensor region = narrow_raw(out[0], dim, offset, t.size(dim));
      detail::copy_into(region, t);
      offset += t.size(dim);
    }
  }
  void cpu(const TensorList& in, TensorList& out) const override { run(in, out); }
  void cuda(const TensorList& in, TensorList& out) const override { run(in, out); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    TensorList grads(s.num_inputs());
    int64_t offset = 0;
    for (size_t i = 0; i < s.num_inputs(); ++i) {
      IntArrayRef sizes = s.input_sizes(i);
      if (sizes.size() == 1 && sizes[0] == 0) {
        if (s.needs_grad(i)) grads[i] = zeros({0}, g[0].options());
        continue;
      }
      if (s.needs_grad(i)) grads[i] = g[0].narrow(dim, offset, sizes[dim]);
      offset += sizes[dim];
    }
    return grads;
  }
};

// stack: out.select(dim, i) = in_i; the gradient of in_i is grad.select(dim, i).
struct Stack final : Op {
  int64_t dim;
  explicit Stack(int64_t d) : dim(d) {}
  const char* name() const override { return "stack"; }
  Save saves() const override { return Save::kNothing; }
  void run(const TensorList& in, TensorList& out) const {
    for (size_t i = 0; i < in.size(); ++i) {
      Tensor region = select_raw(out[0], dim, static_cast<int64_t>(i));
      detail::copy_into(region, in[i]);
    }
  }
  void cpu(const TensorList& in, TensorList& out) const override { run(in, out); }
  void cuda(const TensorList& in, TensorList& out) const override { run(in, out); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    TensorList grads(s.num_inputs());
    for (size_t i = 0; i < s.num_inputs(); ++i)
      if (s.needs_grad(i)) grads[i] = g[0].select(dim, static_cast<int64_t>(i));
    return grads;
  }
};

/// Note [repeat as a broadcast copy]
/// x.repeat(r) with x (left-padded with 1s) of sizes s has, viewed as [r0, s0, r1, s1, ...],
/// out[a0, b0, a1, b1, ...] = x[b0, b1, ...]: a copy from x expanded (stride 0) over the a's.
/// The gradient sums grad viewed the same way over the a's.
DimVector interleave(IntArrayRef repeats, IntArrayRef padded) {
  DimVector shape;
  for (size_t i = 0; i < repeats.size(); ++i) {
    shape.push_back(repeats[i]);
    shape.push_back(padded[i]);
  }
  return shape;
}

struct Repeat final : UnaryOp {
  DimVector repeats;
  explicit Repeat(DimVector r) : repeats(std::move(r)) {}
  const char* name() const override { return "repeat"; }
  Save saves() const override { return Save::kNothing; }
  void run(const Tensor& x, Tensor& out) const {
    size_t lead = repeats.size() - static_cast<size_t>(x.dim());
    DimVector padded(lead, 1), strides;
    for (int64_t s : x.sizes()) padded.push_back(s);
    for (size_t i = 0; i < repeats.size(); ++i) {
      strides.push_back(0);
      strides.push_back(i < lead ? 0 : x.stride(static_cast<int64_t>(i - lead)));
    }
    DimVector shape = interleave(repeats, padded);
    Tensor src = restride(x, shape, strides, x.storage_offset());
    Tensor dst = restride(out, shape, contiguous_strides(shape), out.storage_offset());
    detail::copy_into(dst, src);
  }
  void cpu(const Tensor& x, Tensor& out) const override { run(x, out); }
  void cuda(const Tensor& x, Tensor& out) const override { run(x, out); }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    if (repeats.empty()) return grad;  // a 0-dim input repeated zero times
    IntArrayRef in_sizes = s.input_sizes(0);
    DimVector padded(repeats.size() - in_sizes.size(), 1), sum_dims;
    for (int64_t v : in_sizes) padded.push_back(v);
    for (size_t i = 0; i < repeats.size(); ++i) sum_dims.push_back(static_cast<int64_t>(2 * i));
    return grad.reshape(interleave(repeats, padded)).sum(sum_dims).reshape(in_sizes);
  }
};

// flip: out[i] = x[n - 1 - i] along each flipped dim; read through a negative-stride view.
struct Flip final : UnaryOp {
  DimVector dims;
  explicit Flip(DimVector d) : dims(std::move(d)) {}
  const char* name() const override { return "flip"; }
  Save saves() const override { return Save::kNothing; }
  void run(const Tensor& x, Tensor& out) const {
    // Nothing to copy; and an empty input's strides may be huge (as_strided), where the
    // offset of its last element would overflow int64.
    if (x.numel() == 0) return;
    DimVector strides(x.strides());
    int64_t offset = x.storage_offset();
    for (int64_t d : dims) {
      offset += (x.size(d) - 1) * x.stride(d);
      strides[d] = -x.stride(d);
    }
    detail::copy_into(out, restride(x, x.sizes(), strides, offset));
  }
  void cpu(const Tensor& x, Tensor& out) const override { run(x, out); }
  void cuda(const Tensor& x, Tensor& out) const override { run(x, out); }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override { return grad.flip(dims); }
};

// roll: out[(i + shift) mod n] = x[i] along each rolled dim; two slice copies per dim.
// The gradient rolls back by -shift.
struct Roll final : UnaryOp {
  DimVector shifts, dims;
  Roll(DimVector s, DimVector d) : shifts(std::move(s)), dims(std::move(d)) {}
  const char* name() const override { return "roll"; }
  Save saves() const override { return Save::kNothing; }
  static void roll_one(Tensor& dst, const Tensor& src, int64_t dim, int64_t shift) {
    int64_t n = src.size(dim);
    int64_t s = n == 0 ? 0 : ((shift % n) + n) % n;
    Tensor head = narrow_raw(dst, dim, s, n - s), tail = narrow_raw(dst, dim, 0, s);
    detail::copy_into(head, narrow_raw(src, dim, 0, n - s));
    detail::copy_into(tail, narrow_raw(src, dim, n - s, s));
  }
  void run(const Tensor& x, Tensor& out) const {
    // Nothing to copy; and an empty input's strides may be huge (as_strided), where the
    // offsets of its slices would overflow int64.
    if (x.numel() == 0) return;
    Tensor src = x;
    for (size_t i = 0; i < dims.size(); ++i) {
      Tensor dst = i + 1 == dims.size() ? out : empty_like(x);
      roll_one(dst, src, dims[i], shifts[i]);
      src = dst;
    }
  }
  void cpu(const Tensor& x, Tensor& out) const override { run(x, out); }
  void cuda(const Tensor& x, Tensor& out) const override { run(x, out); }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override {
    DimVector back;
    for (int64_t s : shifts) back.push_back(-s);
    return grad.roll(back, dims);
  }
};

/// Zeros the part of each matrix (last two dims) of t outside the kept triangle: tril keeps
/// j - i <= k, triu keeps j - i >= k. t may be strided (the in-place forms write into views).
void zero_outside_triangle(const Tensor& t, int64_t k, bool lower) {
  if (t.numel() == 0) return;
  int64_t nd = t.dim(), rows = t.size(nd - 2), cols = t.size(nd - 1);
  int64_t rs = t.stride(nd - 2), cs = t.stride(nd - 1);
  int64_t batch = t.numel() / (rows * cols);
  visit_dtype(t.dtype(), [&]<typename T>() {
    T* base = static_cast<T*>(t.data_ptr());
    const T zero = static_cast<T>(0.0f);
    parallel_for(batch * rows, kGrainSize / std::max<int64_t>(cols, 1) + 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        // Element offset of matrix r / rows, found from the leading dims' sizes and strides.
        int64_t b = r / rows, i = r % rows, off = 0;
        for (int64_t d = nd - 3; d >= 0; --d) {
          off += (b % t.size(d)) * t.stride(d);
          b /= t.size(d);
        }
        int64_t lo = lower ? std::clamp<int64_t>(i + k + 1, 0, cols) : 0;
        int64_t hi = lower ? cols : std::clamp<int64_t>(i + k, 0, cols);
        T* row = base + off + i * rs;
        for (int64_t j = lo; j < hi; ++j) row[j * cs] = zero;
      }
    });
  });
}

// tril/triu: a mask that keeps one triangle; its gradient is the same triangle of grad.
struct Triangle final : UnaryOp {
  int64_t k;
  bool lower;
  Triangle(int64_t diag, bool l) : k(diag), lower(l) {}
  const char* name() const override { return lower ? "tril" : "triu"; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    if (!out.is_same(x)) detail::copy_into(out, x);
    zero_outside_triangle(out, k, lower);
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    if (!out.is_same(x)) detail::copy_into(out, x);
    cuda::zero_outside_triangle(out, k, lower);
  }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override {
    return lower ? grad.tril(k) : grad.triu(k);
  }
};

void check_triangle_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
}

}  // namespace

Tensor cat(const TensorList& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    if (!ref && !skipped_in_cat(tensors[i])) ref = &tensors[i];
  }
  ScalarType dtype = result_type(tensors);
  if (!ref) return run_op(Cat{0}, tensors, OutSpec{DimVector{0}, dtype});
  dim = maybe_wrap_dim(dim, ref->dim());
  DimVector shape(ref->sizes());
  shape[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_in_cat(t)) continue;
    EMBER_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(),
                " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      EMBER_CHECK(d == dim || t.size(d) == ref->size(d), "Sizes of tensors must match except in dimension ",
                  dim, ". Expected size ", ref->size(d), " but got size ", t.size(d), " for tensor number ",
                  i, " in the list.");
    shape[dim] += t.size(dim);
  }
  return run_op(Cat{dim}, tensors, OutSpec{shape, dtype});
}

Tensor concat(const TensorList& tensors, int64_t dim) { return cat(tensors, dim); }

Tensor stack(const TensorList& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const Tensor& first = tensors[0];
  dim = maybe_wrap_dim(dim, first.dim() + 1);
  for (size_t i = 1; i < tensors.size(); ++i)
    EMBER_CHECK(tensors[i].sizes().equals(first.sizes()),
                "stack expects each tensor to be equal size, but got ", first.sizes(), " at entry 0 and ",
                tensors[i].sizes(), " at entry ", i);
  DimVector shape(first.sizes());
  shape.insert(dim, static_cast<int64_t>(tensors.size()));
  return run_op(Stack{dim}, tensors, OutSpec{shape, result_type(tensors)});
}

Tensor repeat(const Tensor& x, IntArrayRef repeats) {
  EMBER_CHECK(static_cast<int64_t>(repeats.size()) >= x.dim(),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  size_t lead = repeats.size() - static_cast<size_t>(x.dim());
  DimVector shape;
  for (size_t i = 0; i < repeats.size(); ++i)
    shape.push_back(repeats[i] * (i < lead ? 1 : x.size(static_cast<int64_t>(i - lead))));
  for (int64_t s : shape)
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape.ref());
  return run_op(Repeat{DimVector(repeats)}, {x}, OutSpec{shape, x.dtype()});
}

Tensor flip(const Tensor& x, IntArrayRef dims) {
  DimVector wrapped = wrap_dims(dims, x.dim());
  if (x.dim() == 0) wrapped.clear();  // dim 0 of a 0-dim tensor has one element: nothing to flip
  return run_op(Flip{wrapped}, {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}

Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_CHECK(!shifts.empty(), "`shifts` required");
  // Without dims, roll the flattened tensor (as PyTorch does).
  if (dims.empty() && shifts.size() == 1) return roll(x.flatten(), shifts, {0}).view(x.sizes());
  EMBER_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  DimVector wrapped;
  for (int64_t d : dims) wrapped.push_back(maybe_wrap_dim(d, x.dim(), /*wrap_scalar=*/false));
  return run_op(Roll{DimVector(shifts), wrapped}, {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}

Tensor tril(const Tensor& x, int64_t diagonal) {
  check_triangle_input(x, "tril");
  return run_op(Triangle{diagonal, true}, {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}

Tensor triu(const Tensor& x, int64_t diagonal) {
  check_triangle_input(x, "triu");
  return run_op(Triangle{diagonal, false}, {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}

// ---- Tensor methods ----------------------------------------------------------------------
Tensor Tensor::repeat(IntArrayRef repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return ember::roll(*this, shifts, dims); }
Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }
Tensor& Tensor::tril_(int64_t diagonal) {
  check_triangle_input(*this, "tril");
  return run_inplace_op(Triangle{diagonal, true}, *this, {*this});
}
Tensor& Tensor::triu_(int64_t diagonal) {
  check_triangle_input(*this, "triu");
  return run_inplace_op(Triangle{diagonal, false}, *this, {*this});
}

}  // namespace ember
