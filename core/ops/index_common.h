// Internal to core/ops/index.cpp and scatter.cpp: the two loops every indexing op runs on.
// Note [Indexed loops]
// An indexing op is an elementwise loop over a TensorIter in which one operand's address is
// moved by idx * step: gather-like ops read src at that address, scatter-like ops write dst
// there. The caller builds that operand as a view of the indexed tensor with stride 0 in the
// indexed dim (so the iterator walks only the other dims) and passes the indexed dim's stride
// (in bytes) as `step`; advanced indexing passes precomputed element offsets and step =
// element size. Index values are checked before the loop runs: no errors inside the loop.
// On CUDA the same iterators run cuda::indexed_gather / indexed_scatter (cuda/index.h); there
// the check is a kernel raising a device flag, read once (one host synchronisation per op),
// and only when it is raised is the index brought to the host to find the value to report.
#pragma once

#include "ember/core/tensor.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/index.h"

namespace ember::index_detail {

/// A view of t's storage with the given geometry, outside autograd (for kernels only).
inline Tensor restride(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return Tensor(
      intrusive_ptr<TensorImpl>::make(t.unsafeGetTensorImpl()->storage(), t.dtype(), sizes, strides, offset));
}

/// A 0-dim tensor as a one-element 1-d view (gather/scatter/index_select treat it so).
inline Tensor as_1d(const Tensor& t) {
  if (t.dim() > 0) return t;
  int64_t one = 1;
  return restride(t, IntArrayRef(one), IntArrayRef(one), t.storage_offset());
}

/// The `step` of the indexed loops for t's dim (in bytes; 0-dim tensors count as 1-d). A dim
/// the loops never step along, because t is empty or the dim holds one element (index 0
/// alone), gets 0: its stride may be anything, and as_strided accepts strides near INT64_MAX
/// there, whose size in bytes overflows int64 (fuzz_ops under UBSan). A dim stepped along has
/// its extent inside t's storage, so its byte stride fits.
inline int64_t byte_step(const Tensor& t, int64_t dim) {
  const Tensor a = as_1d(t);
  if (a.numel() == 0 || a.size(dim) == 1) return 0;
  return a.stride(dim) * a.element_size();
}

/// out[i] = *(src[i] + idx[i] * step) over TensorIter(out, {src, idx}); idx is int64.
template <class T>
void gather_loop(const TensorIter& iter, int64_t step) {
  iter.for_each([step](char** data, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = *reinterpret_cast<const int64_t*>(data[2] + i * s[2]);
      *reinterpret_cast<T*>(data[0] + i * s[0]) =
          *reinterpret_cast<const T*>(data[1] + i * s[1] + idx * step);
    }
  });
}

/// *(dst[i] + idx[i] * step) = f(old value, src[i]) over TensorIter(dst, {src, idx}).
/// `serial` for accumulation: repeated indices must neither race nor depend on thread count.
template <class T, class F>
void scatter_loop(const TensorIter& iter, int64_t step, bool serial, const F& f) {
  auto loop = [step, &f](char** data, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = *reinterpret_cast<const int64_t*>(data[2] + i * s[2]);
      T* dst = reinterpret_cast<T*>(data[0] + i * s[0] + idx * step);
      *dst = f(*dst, *reinterpret_cast<const T*>(data[1] + i * s[1]));
    }
  };
  if (serial)
    iter.serial_for_each(loop);
  else
    iter.for_each(loop);
}

/// Whether two entries of the int64 tensor `t` on one line along `dim` are equal: repeated
/// destinations, where an assigning scatter's result depends on which write lands last (Note
/// [Deterministic assignment] in index.cpp). Sorts on t's device and reads back one bool, a
/// cost only deterministic mode pays.
inline bool repeats_along(const Tensor& t, int64_t dim) {
  if (t.dim() == 0 || t.size(dim) < 2) return false;
  Tensor s = std::get<0>(t.sort(dim));
  const int64_t n = s.size(dim);
  return (s.narrow(dim, 1, n - 1) == s.narrow(dim, 0, n - 1)).any().item<bool>();
}

/// The first value of an int64 tensor outside [lo, hi), if any (row-major order).
inline std::optional<int64_t> first_out_of_range(const Tensor& index, int64_t lo, int64_t hi) {
  if (index.is_cuda()) {
    if (!cuda::any_out_of_range(index, lo, hi)) return std::nullopt;
    return first_out_of_range(index.to(Device(kCPU)), lo, hi);  // the error path: find the value
  }
  Tensor c = index.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  for (int64_t i = 0, n = c.numel(); i < n; ++i)
    if (p[i] < lo || p[i] >= hi) return p[i];
  return std::nullopt;
}

}  // namespace ember::index_detail
