// Separable linear maps over a tensor's last two dimensions: the machinery shared by average
// and adaptive-average pooling, reflection/replication/circular padding and nearest/bilinear
// upsampling (internal to those op families; not part of the public API).
//
// Note [Separable maps]
// Each of those ops computes, for every plane p of the leading dimensions,
//   out[p, oh, ow] = sum_{ih, iw} A_h[oh, ih] A_w[ow, iw] x[p, ih, iw] / (d_h[oh] d_w[ow])
// with sparse A_h, A_w (a few taps per output row, kept as CSR in an AxisMap). The backward
// of such a map is its adjoint (transpose), and the adjoint's backward is the map again, so
// one kernel pair gives every order of derivative. The divisors are kept apart from the
// weights so that average pooling computes sum / count exactly as PyTorch does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/core/op.h"

namespace ember::resample {

/// The taps of one axis: output o reads inputs index[start[o] .. start[o+1]) with the
/// matching weights, and is divided by divisor[o].
struct AxisMap {
  int64_t in_size = 0;
  std::vector<int64_t> start{0};
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<double> divisor;

  explicit AxisMap(int64_t in) : in_size(in) {}
  int64_t out_size() const { return static_cast<int64_t>(divisor.size()); }
  void add(int64_t i, double w = 1.0) {
    index.push_back(i);
    weight.push_back(w);
  }
  /// Ends the current output's list of taps.
  void close(double d = 1.0) {
    start.push_back(static_cast<int64_t>(index.size()));
    divisor.push_back(d);
  }
  /// Whether every output copies exactly one input (padding, nearest): a gather, any dtype.
  bool is_gather() const;
};

using AxisMapPtr = std::shared_ptr<const AxisMap>;

/// The identity map of an axis of size n (the height axis of the 1-d ops).
AxisMapPtr identity_axis(int64_t n);

/// How a map is named in errors and autograd: op "avg_pool2d", node stem "AvgPool2D" (the
/// node is "AvgPool2DBackward0", its adjoint's "AvgPool2DBackwardBackward0").
struct MapNames {
  std::string op;
  std::string node_stem;
  bool float_only = false;  // bilinear weights need a floating dtype
};

/// Applies the map (or, with adjoint, its transpose) to x's last two dims, recording autograd;
/// with h null, to the last dim only (the 1-d ops).
Tensor apply_map(const Tensor& x, AxisMapPtr h, AxisMapPtr w, const MapNames& names, bool adjoint = false);

/// Grain for parallel_for over planes: aim at ~32k inner operations per chunk.
inline int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work_per_plane));
}

}  // namespace ember::resample
