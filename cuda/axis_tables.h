// The per-axis tap tables of the separable maps and of max pooling (resample::AxisMap, Note
// [Separable maps] in core/ops/separable_map.h) packed for the CUDA kernels, and the
// arithmetic those kernels do for one output (or, for the adjoints, one input) element.
// Plain C++ with no CUDA header: tests/core/test_cuda_axis_tables.cpp runs these same
// functions on the CPU against the CPU ops, and cuda/separable_map.cu and cuda/pooling.cu
// call them from their kernels.
//
// The adjoints (the maps' backward and max pooling's backward) gather instead of scattering:
// each input element walks the transposed tables (which outputs' taps read it, in output
// order) and sums its terms in the order the CPU's serial scatter adds them. No atomics, so
// the results are deterministic, and for max pooling bitwise equal to the CPU's.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/core/host_device.h"

namespace ember::cuda {

/// One axis's tables, wherever they live (host vectors in tests, device memory in kernels).
/// Output o reads inputs index[start[o] .. start[o+1]) with the taps' weights and is divided
/// by divisor[o]. The transpose: input i is read by taps in_tap[in_start[i] .. in_start[i+1])
/// (ascending, hence in output order), tap a belonging to output tap_out[a].
struct AxisView {
  int64_t in_size = 0;
  int64_t out_size = 0;
  const int64_t* start = nullptr;     // out_size + 1
  const int64_t* index = nullptr;     // one per tap
  const int64_t* tap_out = nullptr;   // one per tap
  const int64_t* in_start = nullptr;  // in_size + 1
  const int64_t* in_tap = nullptr;    // one per tap
  const double* weight = nullptr;     // one per tap
  const double* divisor = nullptr;    // out_size
};

/// Where an axis's arrays start in the packed buffers (element offsets).
struct AxisLayout {
  int64_t in_size = 0, out_size = 0;
  int64_t start = 0, index = 0, tap_out = 0, in_start = 0, in_tap = 0;  // into ints
  int64_t weight = 0, divisor = 0;                                      // into reals
  bool any_empty = false;  // some output has no taps (max pooling's index 0 then; see below)
};

/// Both axes' tables in one integer and one floating buffer, so a launch uploads two arrays.
/// The buffers are never empty (a trailing pad element), which keeps every upload non-empty.
struct PackedTables {
  std::vector<int64_t> ints;
  std::vector<double> reals;
  AxisLayout h, w;
};

/// Appends one axis (any type with AxisMap's in_size/start/index/weight/divisor) to the
/// buffers, with its transpose: a counting sort of the taps by input, stable, so each input's
/// taps stay in output order.
template <class Map>
AxisLayout pack_axis(const Map& m, std::vector<int64_t>& ints, std::vector<double>& reals) {
  AxisLayout l;
  l.in_size = m.in_size;
  l.out_size = static_cast<int64_t>(m.divisor.size());
  const int64_t taps = static_cast<int64_t>(m.index.size());
  auto append = [&ints](const auto& v) {
    int64_t at = static_cast<int64_t>(ints.size());
    ints.insert(ints.end(), v.begin(), v.end());
    return at;
  };
  l.start = append(m.start);
  l.index = append(m.index);
  std::vector<int64_t> tap_out(static_cast<size_t>(taps));
  for (int64_t o = 0; o < l.out_size; ++o) {
    if (m.start[o + 1] == m.start[o]) l.any_empty = true;
    for (int64_t a = m.start[o]; a < m.start[o + 1]; ++a) tap_out[a] = o;
  }
  std::vector<int64_t> in_start(static_cast<size_t>(l.in_size + 1), 0), in_tap(static_cast<size_t>(taps));
  for (int64_t a = 0; a < taps; ++a) ++in_start[m.index[a] + 1];
  for (int64_t i = 0; i < l.in_size; ++i) in_start[i + 1] += in_start[i];
  std::vector<int64_t> next(in_start.begin(), in_start.end() - 1);
  for (int64_t a = 0; a < taps; ++a) in_tap[next[m.index[a]]++] = a;
  l.tap_out = append(tap_out);
  l.in_start = append(in_start);
  l.in_tap = append(in_tap);
  l.weight = static_cast<int64_t>(reals.size());
  reals.insert(reals.end(), m.weight.begin(), m.weight.end());
  l.divisor = static_cast<int64_t>(reals.size());
  reals.insert(reals.end(), m.divisor.begin(), m.divisor.end());
  return l;
}

template <class Map>
PackedTables pack_tables(const Map& h, const Map& w) {
  PackedTables t;
  t.h = pack_axis(h, t.ints, t.reals);
  t.w = pack_axis(w, t.ints, t.reals);
  t.ints.push_back(0);
  t.reals.push_back(0);
  return t;
}

/// The view of a packed axis whose buffers start at ints / reals.
inline AxisView view_axis(const AxisLayout& l, const int64_t* ints, const double* reals) {
  AxisView v;
  v.in_size = l.in_size;
  v.out_size = l.out_size;
  v.start = ints + l.start;
  v.index = ints + l.index;
  v.tap_out = ints + l.tap_out;
  v.in_start = ints + l.in_start;
  v.in_tap = ints + l.in_tap;
  v.weight = reals + l.weight;
  v.divisor = reals + l.divisor;
  return v;
}

// ---- one element ---------------------------------------------------------------------------------
// `load(offset)` returns the element at that offset in the current plane, as the compute type M
// (opmath_t of the element type); the tables' doubles are cast to M as the CPU kernels do.

/// A gather map (every output reads one input with weight 1): the input offset of (oh, ow).
EMBER_HOST_DEVICE inline int64_t gather_offset(const AxisView& h, const AxisView& w, int64_t oh, int64_t ow) {
  return h.index[h.start[oh]] * w.in_size + w.index[w.start[ow]];
}

/// Output (oh, ow) of the map: sum_a wh_a (sum_c ww_c x[ih_a, iw_c]) / (dh dw), the CPU's
/// map_planes term for term.
template <class M, class Load>
EMBER_HOST_DEVICE M map_point(const AxisView& h, const AxisView& w, int64_t oh, int64_t ow,
                              const Load& load) {
  const int64_t W = w.in_size;
  M acc = M(0);
  for (int64_t a = h.start[oh]; a < h.start[oh + 1]; ++a) {
    const int64_t row = h.index[a] * W;
    M inner = M(0);
    for (int64_t c = w.start[ow]; c < w.start[ow + 1]; ++c)
      inner += static_cast<M>(w.weight[c]) * load(row + w.index[c]);
    acc += static_cast<M>(h.weight[a]) * inner;
  }
  return acc / (static_cast<M>(h.divisor[oh]) * static_cast<M>(w.divisor[ow]));
}

/// Input (ih, iw) of the adjoint map: the sum over the taps that read it of
/// ww (wh (g[oh, ow] / (dh dw))), the CPU's adjoint_planes products, in output order.
template <class M, class Load>
EMBER_HOST_DEVICE M adjoint_point(const AxisView& h, const AxisView& w, int64_t ih, int64_t iw,
                                  const Load& load) {
  const int64_t Wo = w.out_size;
  M acc = M(0);
  for (int64_t s = h.in_start[ih]; s < h.in_start[ih + 1]; ++s) {
    const int64_t a = h.in_tap[s], oh = h.tap_out[a];
    const M wh = static_cast<M>(h.weight[a]), dh = static_cast<M>(h.divisor[oh]);
    for (int64_t u = w.in_start[iw]; u < w.in_start[iw + 1]; ++u) {
      const int64_t c = w.in_tap[u], ow = w.tap_out[c];
      const M v = load(oh * Wo + ow) / (dh * static_cast<M>(w.divisor[ow]));
      acc += static_cast<M>(w.weight[c]) * (wh * v);
    }
  }
  return acc;
}

/// A window's maximum and the plane offset where it was found.
template <class M>
struct MaxHit {
  M value;
  int64_t at;
};

/// Max over output (oh, ow)'s window, scanned row by row from `lowest` (-inf, or the type's
/// lowest value): v replaces the best when v > best or v is NaN, so ties keep the first
/// position and NaN propagates (the CPU's max_planes). An empty window reports offset 0.
template <class M, class Load>
EMBER_HOST_DEVICE MaxHit<M> max_window(const AxisView& h, const AxisView& w, int64_t oh, int64_t ow, M lowest,
                                       const Load& load) {
  const int64_t W = w.in_size;
  const int64_t h0 = h.start[oh], h1 = h.start[oh + 1], w0 = w.start[ow], w1 = w.start[ow + 1];
  MaxHit<M> r{lowest, h0 < h1 && w0 < w1 ? h.index[h0] * W + w.index[w0] : 0};
  for (int64_t a = h0; a < h1; ++a) {
    const int64_t row = h.index[a] * W;
    for (int64_t c = w0; c < w1; ++c) {
      const int64_t i = row + w.index[c];
      const M v = load(i);
      bool take = v > r.value;
      if constexpr (std::is_floating_point_v<M>) take = take || v != v;
      if (take) {
        r.value = v;
        r.at = i;
      }
    }
  }
  return r;
}

/// Input (ih, iw) of max pooling's backward: the sum of the output gradients whose argmax it
/// is, added in output order and rounded to the stored type after each add (`round`), as the
/// CPU's serial scatter does. Only the outputs whose windows cover (ih, iw) can name it,
/// except that an empty window names offset 0: with `scan_all` (set for input (0, 0) when
/// some window is empty) every output is checked.
template <class M, class LoadG, class LoadIdx, class Round>
EMBER_HOST_DEVICE M max_scatter_point(const AxisView& h, const AxisView& w, int64_t ih, int64_t iw,
                                      bool scan_all, const LoadG& load_g, const LoadIdx& load_idx,
                                      const Round& round) {
  const int64_t i = ih * w.in_size + iw, Wo = w.out_size;
  M acc = M(0);
  if (scan_all) {
    for (int64_t o = 0; o < h.out_size * Wo; ++o)
      if (load_idx(o) == i) acc = round(acc + load_g(o));
    return acc;
  }
  for (int64_t s = h.in_start[ih]; s < h.in_start[ih + 1]; ++s) {
    const int64_t oh = h.tap_out[h.in_tap[s]];
    for (int64_t u = w.in_start[iw]; u < w.in_start[iw + 1]; ++u) {
      const int64_t o = oh * Wo + w.tap_out[w.in_tap[u]];
      if (load_idx(o) == i) acc = round(acc + load_g(o));
    }
  }
  return acc;
}

}  // namespace ember::cuda
