// cpu_reduce: the loop machinery of CPU reductions (sum, max, argmax, var, ...).
// The input's dims split into kept dims (one output element per index) and reduced dims
// (folded into an accumulator). Reduced dims are coalesced where memory allows, so a
// reduction over contiguous dims is a dense loop (split over interleaved lanes where the op
// allows); a reduction over outer dims folds a block of neighbouring outputs row by row.
// Work is split over outputs, or — for a single output — over fixed-size chunks of the
// reduced range merged in chunk order: the result never depends on the thread count.
// for_each_line walks the 1-d lines along one dim (sort, topk).
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <type_traits>
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

/// Bytes of accumulators the outer-reduction path keeps per block of outputs (see
/// cpu_reduce): wide enough that each reduced row is read as one long dense run (few pages,
/// prefetch-friendly), small enough to stay in L1.
constexpr int64_t kOuterBlockBytes = 8192;

/// Outputs per block of the outer-reduction path for accumulators of `acc_size` bytes.
constexpr int64_t outer_block(size_t acc_size) {
  return std::max<int64_t>(16, kOuterBlockBytes / static_cast<int64_t>(acc_size));
}

/// Independent accumulators a dense run is split over when the fold may be reordered.
constexpr int64_t kLanes = 8;

/// Folds the dense run p[0, n) with kLanes interleaved accumulators (element j goes to lane
/// j % kLanes), merged in lane order, then the tail. The lanes do not wait on each other,
/// so the loop runs at the machine's throughput rather than one add's latency.
template <class T, class Acc, class Step, class Merge>
Acc fold_lanes(const T* p, int64_t n, int64_t idx, const Acc& init, const Step& step, const Merge& merge) {
  std::array<Acc, kLanes> lane;
  lane.fill(init);
  int64_t m = n / kLanes * kLanes;
  for (int64_t j = 0; j < m; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = step(lane[l], p[j + l], idx + j + l);
  Acc acc = lane[0];
  for (int64_t l = 1; l < kLanes; ++l) acc = merge(acc, lane[l]);
  for (int64_t j = m; j < n; ++j) acc = step(acc, p[j], idx + j);
  return acc;
}

/// Folds the run p[0, n) (elements `stride` apart) into acc in order. The accumulator is a
/// local, not a reference, so it can live in registers: stores through a reference could
/// alias the data being read and force a memory round trip per element.
template <class T, class Acc, class Step>
Acc fold_run(const T* p, int64_t stride, int64_t n, int64_t idx, Acc acc, const Step& step) {
  if (stride == 1) {
    for (int64_t j = 0; j < n; ++j) acc = step(acc, p[j], idx + j);
  } else {
    for (int64_t j = 0; j < n; ++j) acc = step(acc, p[j * stride], idx + j);
  }
  return acc;
}

/// Reduces x (element type T) over `mask`: for each output element o, folds its reduced
/// elements with acc = step(acc, value, index) starting from init(o), merges partials with
/// merge(a, b), and calls write(o, acc). `init` is an Acc, or a callable giving output o's
/// starting Acc (a per-output shift such as a mean); either way it must be merge's
/// identity. `index` is the row-major position of the value among o's reduced elements
/// (what argmax reports). `reorder`: merge may combine partials of interleaved elements
/// (sums, products, extremes; not argmax, whose ties need order), which lets dense runs use
/// fold_lanes. The order of the fold depends only on x's geometry, never on the thread count.
template <class T, class Acc, class Init, class Step, class Merge, class Write>
void cpu_reduce(const Tensor& x, uint64_t mask, const Init& init, const Step& step, const Merge& merge,
                const Write& write, bool reorder = false) {
  auto init_of = [&init](int64_t o) -> Acc {
    if constexpr (std::is_invocable_r_v<Acc, const Init&, int64_t>)
      return init(o);
    else
      return init;
  };
  ReduceGeometry g = reduce_geometry(x, mask);
  const T* data = static_cast<const T*>(x.data_ptr());
  auto fold = [&](const T* base, int64_t begin, int64_t end, const Acc& start) {
    Acc acc = start;
    for_each_reduced<T>(g, base, begin, end, [&](const T* p, int64_t stride, int64_t n, int64_t idx) {
      if (stride == 1 && reorder && n >= 4 * kLanes)
        acc = merge(acc, fold_lanes(p, n, idx, start, step, merge));
      else
        acc = fold_run(p, stride, n, idx, acc, step);
    });
    return acc;
  };
  if (g.n_out == 0) return;
  if (g.n_out == 1 && g.n_red > kReduceChunk) {
    int64_t chunks = (g.n_red + kReduceChunk - 1) / kReduceChunk;
    Acc start = init_of(0);
    std::vector<Acc> partial(chunks, start);
    parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        partial[c] = fold(data, c * kReduceChunk, std::min(g.n_red, (c + 1) * kReduceChunk), start);
    });
    Acc acc = partial[0];
    for (int64_t c = 1; c < chunks; ++c) acc = merge(acc, partial[c]);
    write(0, acc);
    return;
  }
  // Outer reduction: the innermost kept dim is dense and the reduced dims are not (summing a
  // [N, M] matrix over dim 0). Folding one output at a time would stride through memory, so
  // a block of neighbouring outputs is folded together, one reduced row at a time, each
  // output seeing its elements in order.
  bool outer = !g.kept_sizes.empty() && g.kept_strides.back() == 1 && g.kept_sizes.back() > 1 &&
               !g.red_sizes.empty() && g.red_strides.back() != 1;
  if (outer) {
    constexpr int64_t block = outer_block(sizeof(Acc));
    int64_t inner = g.kept_sizes.back();
    int64_t per_row = (inner + block - 1) / block;
    int64_t grain = std::max<int64_t>(1, kGrainSize / (block * std::max<int64_t>(g.n_red, 1)));
    parallel_for(g.n_out / inner * per_row, grain, [&](int64_t b, int64_t e) {
      auto acc = std::make_unique<Acc[]>(block);  // not a vector: vector<bool> has no data()
      for (int64_t blk = b; blk < e; ++blk) {
        int64_t o0 = blk / per_row * inner + blk % per_row * block;
        int64_t nb = std::min(block, inner - blk % per_row * block);
        Acc* a = acc.get();
        for (int64_t i = 0; i < nb; ++i) a[i] = init_of(o0 + i);
        for_each_reduced<T>(g, data + kept_offset(g, o0), 0, g.n_red,
                            [&](const T* p, int64_t stride, int64_t n, int64_t idx) {
                              for (int64_t j = 0; j < n; ++j, p += stride)
                                for (int64_t i = 0; i < nb; ++i) a[i] = step(a[i], p[i], idx + j);
                            });
        for (int64_t i = 0; i < nb; ++i) write(o0 + i, a[i]);
      }
    });
    return;
  }
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.n_red, 1));
  parallel_for(g.n_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) write(o, fold(data + kept_offset(g, o), 0, g.n_red, init_of(o)));
  });
}

/// Calls f(a_offset, b_offset) (in elements) for each 1-d line along `dim` of a and b, two
/// tensors whose sizes agree except along dim (sort, topk), in parallel over lines.
/// `line_cost` is the work of one line in elements, to size the parallel grain.
template <class F>
void for_each_line(const Tensor& a, const Tensor& b, int64_t dim, int64_t line_cost, const F& f) {
  uint64_t mask = a.dim() == 0 ? 0 : uint64_t{1} << dim;
  ReduceGeometry ga = reduce_geometry(a, mask), gb = reduce_geometry(b, mask);
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(line_cost, 1));
  parallel_for(ga.n_out, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) f(kept_offset(ga, o), kept_offset(gb, o));
  });
}

}  // namespace ember::cpu
