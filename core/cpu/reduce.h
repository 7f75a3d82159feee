// cpu_reduce: the loop machinery of CPU reductions (sum, max, argmax, var, ...).
// The input's dims split into kept dims (one output element per index) and reduced dims
// (folded into an accumulator). Reduced dims are coalesced where memory allows, so a
// reduction over contiguous dims is a dense loop. Work is split over outputs, or — for a
// single output — over fixed-size chunks of the reduced range whose partial results are
// merged in chunk order: the result never depends on the thread count.
#pragma once

#include <vector>

#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"

namespace ember::cpu {

/// Elements per partial result when one output reduces a long range.
constexpr int64_t kReduceChunk = 32768;

struct ReduceGeometry {
  DimVector kept_sizes, kept_strides;  // outer, row-major order of the output
  DimVector red_sizes, red_strides;    // reduced dims, coalesced, outermost first
  int64_t n_out = 1, n_red = 1;
};

/// Splits x's dims by `mask` (bit d set: dim d is reduced).
ReduceGeometry reduce_geometry(const Tensor& x, uint64_t mask);

/// Calls run(ptr, stride, n, idx) for the reduced elements [begin, end) below `base`, in
/// row-major order, where idx is the linear reduced index of the run's first element.
template <class T, class Run>
void for_each_reduced(const ReduceGeometry& g, const T* base, int64_t begin, int64_t end, const Run& run) {
  int64_t nd = static_cast<int64_t>(g.red_sizes.size());
  if (nd == 0) {
    if (begin < end) run(base, 0, 1, 0);
    return;
  }
  int64_t inner = g.red_sizes[nd - 1], inner_stride = g.red_strides[nd - 1];
  int64_t pos = begin;
  while (pos < end) {
    int64_t rem = pos / inner, off = 0;
    for (int64_t d = nd - 2; d >= 0; --d) {
      off += (rem % g.red_sizes[d]) * g.red_strides[d];
      rem /= g.red_sizes[d];
    }
    int64_t j = pos % inner;
    int64_t n = std::min(inner - j, end - pos);
    run(base + off + j * inner_stride, inner_stride, n, pos);
    pos += n;
  }
}

/// Offset (in elements) of output element `o`'s reduced block.
inline int64_t kept_offset(const ReduceGeometry& g, int64_t o) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(g.kept_sizes.size()) - 1; d >= 0; --d) {
    off += (o % g.kept_sizes[d]) * g.kept_strides[d];
    o /= g.kept_sizes[d];
  }
  return off;
}

/// Reduces x (element type T) over `mask`: for each output element o, folds its reduced
/// elements with acc = step(acc, value, index) starting from `init`, merges chunk partials
/// with merge(a, b), and calls write(o, acc).
template <class T, class Acc, class Step, class Merge, class Write>
void cpu_reduce(const Tensor& x, uint64_t mask, Acc init, const Step& step, const Merge& merge, const Write& write) {
  ReduceGeometry g = reduce_geometry(x, mask);
  const T* data = static_cast<const T*>(x.data_ptr());
  auto fold = [&](const T* base, int64_t begin, int64_t end, Acc acc) {
    for_each_reduced<T>(g, base, begin, end, [&](const T* p, int64_t stride, int64_t n, int64_t idx) {
      if (stride == 1) {
        for (int64_t j = 0; j < n; ++j) acc = step(acc, p[j], idx + j);
      } else {
        for (int64_t j = 0; j < n; ++j) acc = step(acc, p[j * stride], idx + j);
      }
    });
    return acc;
  };
  if (g.n_out == 0) return;
  if (g.n_out == 1 && g.n_red > kReduceChunk) {
    int64_t chunks = (g.n_red + kReduceChunk - 1) / kReduceChunk;
    std::vector<Acc> partial(chunks, init);
    parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        partial[c] = fold(data, c * kReduceChunk, std::min(g.n_red, (c + 1) * kReduceChunk), init);
    });
    Acc acc = partial[0];
    for (int64_t c = 1; c < chunks; ++c) acc = merge(acc, partial[c]);
    write(0, acc);
    return;
  }
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.n_red, 1));
  parallel_for(g.n_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) write(o, fold(data + kept_offset(g, o), 0, g.n_red, init));
  });
}

}  // namespace ember::cpu
