// Sorting along one dim: sort (stable, ascending or descending), argsort, topk. NaN sorts
// above every number, as in PyTorch; equal values keep their original order.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/reduce.h"
#include "ember/core/op.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/reduce_common.h"
#include "ember/core/ops/sort.h"
#include "ember/cuda/reduce.h"

namespace ember {
namespace {

/// a < b, with NaN above everything (and equal to NaN).
template <class M>
bool less_nan(M a, M b) {
  if constexpr (is_float_v<M>)
    return !std::isnan(a) && (std::isnan(b) || a < b);
  else
    return a < b;
}

/// Writes the first k elements of each line along `dim` of x in sorted order (ascending or
/// descending, ties by position, so the order is that of a stable sort) and their positions.
void sort_kernel(const Tensor& x, Tensor& values, Tensor& indices, int64_t dim, int64_t k, bool descending) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    using M = opmath_t<T>;
    struct Item {
      M v;
      int64_t i;
    };
    auto before = [descending](const Item& a, const Item& b) {
      if (descending ? less_nan(b.v, a.v) : less_nan(a.v, b.v)) return true;
      if (descending ? less_nan(a.v, b.v) : less_nan(b.v, a.v)) return false;
      return a.i < b.i;
    };
    const T* in = static_cast<const T*>(x.data_ptr());
    T* vo = static_cast<T*>(values.data_ptr());
    int64_t* io = indices.data_ptr<int64_t>();
    bool scalar = x.dim() == 0;
    int64_t n = scalar ? 1 : x.size(dim), si = scalar ? 0 : x.stride(dim),
            so = scalar ? 0 : values.stride(dim);
    cpu::for_each_line(x, values, dim, n * 8, [&](int64_t xi, int64_t oi) {
      if (k == 0) return;
      thread_local std::vector<Item> items;  // reused across lines: no allocation per line
      items.resize(n);
      for (int64_t j = 0; j < n; ++j) items[j] = {static_cast<M>(in[xi + j * si]), j};
      if (k == n)
        std::sort(items.begin(), items.end(), before);
      else
        std::partial_sort(items.begin(), items.begin() + k, items.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        vo[oi + j * so] = static_cast<T>(items[j].v);
        io[oi + j * so] = items[j].i;
      }
    });
  });
}

// sort/topk: (values, indices) of the first k sorted elements along dim; each value's
// gradient goes back to the position it came from.
struct Sort final : Op {
  int64_t dim, k;
  bool descending;
  const char* op_name;
  Sort(int64_t d, int64_t kk, bool desc, const char* n) : dim(d), k(kk), descending(desc), op_name(n) {}
  const char* name() const override { return op_name; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const TensorList& in, TensorList& out) const override {
    sort_kernel(in[0], out[0], out[1], dim, k, descending);
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::sort(in[0], out[0], out[1], dim, descending);
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    return {detail::value_selecting_backward(grads[0], dim, s.output(1), s.input_sizes(0), true)};
  }
};

std::tuple<Tensor, Tensor> run_sort(const Tensor& x, int64_t dim, int64_t k, bool descending,
                                    const char* name) {
  DimVector shape(x.sizes());
  if (x.dim() > 0) shape[dim] = k;
  TensorList out =
      run_op(Sort{dim, k, descending, name}, {x}, {OutSpec{shape, x.dtype()}, OutSpec{shape, kLong}});
  return {out[0], out[1]};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  int64_t d = maybe_wrap_dim(dim, x.dim());
  return run_sort(x, d, x.dim() == 0 ? 1 : x.size(d), descending, "sort");
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  NoGradGuard no_grad;  // only the indices are wanted
  return std::get<1>(sort(x, dim, descending));
}

/// `sorted` = false allows any order; ember always returns the sorted one.
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  int64_t d = maybe_wrap_dim(dim, x.dim());
  EMBER_CHECK(x.dtype() != kBool, "\"topk\" not implemented for 'Bool'");
  EMBER_CHECK(k >= 0 && k <= (x.dim() == 0 ? 1 : x.size(d)), "selected index k out of range");
  return run_sort(x, d, x.dim() == 0 ? 1 : k, largest, "topk");  // a 0-dim input gives its element
}

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return ember::sort(*this, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const { return ember::argsort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}

}  // namespace ember
