// TensorIter: broadcasting, coalescing and the parallel N-d loop.
#include "ember/core/tensor_iter.h"

#include <omp.h>

#include "ember/core/shape.h"

namespace ember {

TensorIter::TensorIter(const Tensor& out, const TensorList& inputs) {
  ntensors_ = 1 + static_cast<int>(inputs.size());
  EMBER_CHECK(ntensors_ <= kMaxOperands, "TensorIter: too many operands");
  IntArrayRef sizes = out.sizes();
  // Fast path (per-op overhead): every operand contiguous with out's exact shape. The general
  // code below would drop the size-1 dims and merge the rest into one dense run, so set that
  // result up directly: one dim of numel elements (none for a single element).
  if (out.is_contiguous() && out.numel() > 0) {
    bool dense = true;
    for (const Tensor& t : inputs) {
      if (!t.is_contiguous() || !t.sizes().equals(sizes)) { dense = false; break; }
    }
    if (dense) {
      numel_ = out.numel();
      if (numel_ > 1) shape_.assign(1, numel_);
      base_[0] = static_cast<char*>(out.data_ptr());
      operands_[0] = out;
      if (numel_ > 1) strides_[0].assign(1, out.element_size());
      for (size_t i = 0; i < inputs.size(); ++i) {
        const Tensor& t = inputs[i];
        base_[i + 1] = static_cast<char*>(t.data_ptr());
        operands_[i + 1] = t;
        if (numel_ > 1) strides_[i + 1].assign(1, t.element_size());
      }
      return;
    }
  }
  int64_t nd = static_cast<int64_t>(sizes.size());
  numel_ = out.numel();
  shape_.resize(nd);
  for (int64_t d = 0; d < nd; ++d) shape_[d] = sizes[nd - 1 - d];
  auto set = [&](int k, const Tensor& t) {
    int64_t es = t.element_size();
    int64_t tnd = t.dim();
    EMBER_CHECK(tnd <= nd, "TensorIter: input has more dims than the output");
    strides_[k].assign(nd, 0);
    for (int64_t d = 0; d < tnd; ++d) {
      int64_t size = t.sizes()[tnd - 1 - d];
      EMBER_CHECK(size == shape_[d] || size == 1, "The size of tensor a (", size,
                  ") must match the size of tensor b (", shape_[d], ") at non-singleton dimension ",
                  nd - 1 - d);
      // A stride whose size in bytes overflows int64 can only belong to an empty tensor (a
      // non-empty one's extent fits in memory; fuzz_ops built one with as_strided): it is never
      // stepped along, so 0 serves, as for a size-1 dim.
      int64_t bytes = 0;
      strides_[k][d] = size == 1 || __builtin_mul_overflow(t.strides()[tnd - 1 - d], es, &bytes) ? 0 : bytes;
    }
    base_[k] = static_cast<char*>(t.data_ptr());
    operands_[k] = t;
  };
  set(0, out);
  for (size_t i = 0; i < inputs.size(); ++i) set(static_cast<int>(i) + 1, inputs[i]);
  coalesce();
}

void TensorIter::coalesce() {
  // Drop size-1 dims, then merge dim d+1 into d when every operand steps evenly across them.
  DimVector shape;
  std::array<DimVector, kMaxOperands> strides;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] == 1) continue;
    bool merge = !shape.empty();
    for (int k = 0; merge && k < ntensors_; ++k)
      merge = strides[k].back() * shape.back() == strides_[k][d];
    if (merge) {
      shape.back() *= shape_[d];
    } else {
      shape.push_back(shape_[d]);
      for (int k = 0; k < ntensors_; ++k) strides[k].push_back(strides_[k][d]);
    }
  }
  shape_ = std::move(shape);
  for (int k = 0; k < ntensors_; ++k) strides_[k] = std::move(strides[k]);
}

void TensorIter::serial_range(Loop loop, void* ctx, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  // A CUDA tensor reaching a CPU loop would be read through a device pointer: fail clearly.
  EMBER_CHECK(device().is_cpu(), "internal error: a CPU kernel was called with ", device(),
              " tensors (an op is missing its CUDA path)");
  int nd = ndim();
  std::array<char*, kMaxOperands> ptr{};
  std::array<int64_t, kMaxOperands> inner{};
  if (nd == 0) {  // a single element
    for (int k = 0; k < ntensors_; ++k) { ptr[k] = base_[k]; inner[k] = 0; }
    loop(ctx, ptr.data(), inner.data(), 1);
    return;
  }
  for (int k = 0; k < ntensors_; ++k) inner[k] = strides_[k][0];
  // Multi-index of `begin`, innermost first.
  DimVector idx(nd);
  int64_t rem = begin;
  for (int d = 0; d < nd; ++d) { idx[d] = rem % shape_[d]; rem /= shape_[d]; }
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < ntensors_; ++k) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += idx[d] * strides_[k][d];
      ptr[k] = base_[k] + off;
    }
    int64_t n = std::min(shape_[0] - idx[0], end - pos);
    loop(ctx, ptr.data(), inner.data(), n);
    pos += n;
    idx[0] += n;
    for (int d = 0; d < nd - 1 && idx[d] == shape_[d]; ++d) { idx[d] = 0; ++idx[d + 1]; }
  }
}

void TensorIter::for_each_impl(Loop loop, void* ctx, int64_t grain) const {
  if (numel_ == 0) return;
  if (numel_ < grain || omp_get_max_threads() == 1 || omp_in_parallel()) {
    serial_range(loop, ctx, 0, numel_);
    return;
  }
  int64_t nthreads = std::min<int64_t>(omp_get_max_threads(), (numel_ + grain - 1) / grain);
#pragma omp parallel num_threads(nthreads)
  {
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t chunk = (numel_ + nt - 1) / nt;
    serial_range(loop, ctx, t * chunk, std::min(numel_, (t + 1) * chunk));
  }
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "Expected positive number of threads");
  omp_set_num_threads(n);
}

int get_num_threads() { return omp_get_max_threads(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  if (n <= grain || omp_get_max_threads() == 1 || omp_in_parallel()) {
    f(0, n);
    return;
  }
  int64_t nthreads = std::min<int64_t>(omp_get_max_threads(), (n + grain - 1) / grain);
#pragma omp parallel num_threads(nthreads)
  {
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e) f(b, e);
  }
}

}  // namespace ember
