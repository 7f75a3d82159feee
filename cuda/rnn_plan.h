// The device-free half of cuDNN's RNN (cuda/rnn.cpp): the shape of a layer stack, PyTorch's
// flat weight list for it (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0,
// then _reverse, layer by layer) and how each of those parameters is cut into cuDNN's per-gate
// matrices and biases. Plain C++, header-only, so the CPU tests check it in every build.
//
// Note [cuDNN RNN weight layout]
// cuDNN keeps all weights in one opaque "weight space"; cudnnGetRNNWeightParams tells where
// the matrix and bias of each (pseudo-layer, linear-layer id) live. A pseudo-layer is
// layer * directions + direction. The linear-layer ids: RNN 0 = W (input), 1 = R (recurrent);
// LSTM 0-3 = input gates i, f, g, o and 4-7 their recurrent matrices, 8 = the projection
// W_hr (no bias); GRU 0-2 = input gates r, z, n and 3-5 recurrent. PyTorch stacks the gates
// of W_ih / W_hh along dim 0 in the same orders (i, f, g, o and r, z, n), so gate k of
// weight_ih is rows [k*H, (k+1)*H) and goes to id k, gate k of weight_hh to id gates + k;
// bias_ih / bias_hh split the same way (cuDNN's CUDNN_RNN_DOUBLE_BIAS mode, as PyTorch's).
// cuDNN happens to place the gates of one matrix back to back, so after merge_copies each
// parameter is usually one copy; nothing here relies on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ember/core/error.h"

namespace ember::cuda {

/// The cell, numbered as cuDNN's cudnnRNNMode_t.
enum class RnnCell { kRnnRelu = 0, kRnnTanh = 1, kLstm = 2, kGru = 3 };

/// One of PyTorch's parameters of a (layer, direction), in the order it registers them.
enum class RnnParam { kWeightIh, kWeightHh, kBiasIh, kBiasHh, kWeightHr };

/// The options of an RNN / LSTM / GRU stack that fix its weights and states.
struct RnnShape {
  RnnCell cell = RnnCell::kRnnTanh;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t proj_size = 0;  // 0: no projection (only LSTM has one)
  int64_t num_layers = 1;
  bool bidirectional = false;
  bool bias = true;

  int64_t directions() const { return bidirectional ? 2 : 1; }
  /// Gates per cell: rows of W_ih are gates() * hidden_size.
  int64_t gates() const {
    switch (cell) {
      case RnnCell::kLstm: return 4;
      case RnnCell::kGru: return 3;
      default: return 1;
    }
  }
  /// The size of h (and of each direction's output): proj_size when projecting.
  int64_t out_size() const { return proj_size > 0 ? proj_size : hidden_size; }
  /// The input size of `layer`: the stack's input, then the previous layer's output.
  int64_t layer_input(int64_t layer) const { return layer == 0 ? input_size : out_size() * directions(); }
  int64_t params_per_direction() const { return 2 + (bias ? 2 : 0) + (proj_size > 0 ? 1 : 0); }
  int64_t num_params() const { return params_per_direction() * directions() * num_layers; }
  /// cuDNN's linear-layer ids with a gate matrix (input and recurrent), before the projection.
  int64_t gate_matrices() const { return 2 * gates(); }
};

/// Index of `param` of (layer, direction) in PyTorch's flat weight list; -1 if the stack has
/// no such parameter (biases without bias, W_hr without a projection).
inline int64_t rnn_param_index(const RnnShape& s, int64_t layer, int64_t direction, RnnParam param) {
  const int64_t base = (layer * s.directions() + direction) * s.params_per_direction();
  switch (param) {
    case RnnParam::kWeightIh: return base;
    case RnnParam::kWeightHh: return base + 1;
    case RnnParam::kBiasIh: return s.bias ? base + 2 : -1;
    case RnnParam::kBiasHh: return s.bias ? base + 3 : -1;
    case RnnParam::kWeightHr: return s.proj_size > 0 ? base + (s.bias ? 4 : 2) : -1;
  }
  return -1;
}

/// The shape PyTorch gives `param` of `layer`.
inline std::vector<int64_t> rnn_param_shape(const RnnShape& s, int64_t layer, RnnParam param) {
  const int64_t G = s.gates() * s.hidden_size;
  switch (param) {
    case RnnParam::kWeightIh: return {G, s.layer_input(layer)};
    case RnnParam::kWeightHh: return {G, s.out_size()};
    case RnnParam::kBiasIh:
    case RnnParam::kBiasHh: return {G};
    case RnnParam::kWeightHr: return {s.proj_size, s.hidden_size};
  }
  return {};
}

/// One cuDNN matrix or bias and the block of a PyTorch parameter it holds.
struct RnnWeightPiece {
  int64_t pseudo_layer = 0;  // layer * directions + direction
  int64_t lin_layer_id = 0;  // Note [cuDNN RNN weight layout]
  bool is_bias = false;
  int64_t param = 0;         // index in the flat weight list
  int64_t param_offset = 0;  // first element of the block in that parameter (row-major)
  int64_t rows = 0, cols = 1;
  int64_t numel() const { return rows * cols; }
};

/// Every piece of the stack, pseudo-layer by pseudo-layer; biases only when the stack has them.
inline std::vector<RnnWeightPiece> rnn_weight_pieces(const RnnShape& s) {
  std::vector<RnnWeightPiece> out;
  const int64_t H = s.hidden_size, g = s.gates();
  for (int64_t layer = 0; layer < s.num_layers; ++layer) {
    for (int64_t dir = 0; dir < s.directions(); ++dir) {
      const int64_t pseudo = layer * s.directions() + dir;
      for (int64_t id = 0; id < s.gate_matrices(); ++id) {
        const bool recurrent = id >= g;
        const int64_t gate = recurrent ? id - g : id;
        const int64_t cols = recurrent ? s.out_size() : s.layer_input(layer);
        const RnnParam w = recurrent ? RnnParam::kWeightHh : RnnParam::kWeightIh;
        out.push_back({pseudo, id, false, rnn_param_index(s, layer, dir, w), gate * H * cols, H, cols});
        if (!s.bias) continue;
        const RnnParam b = recurrent ? RnnParam::kBiasHh : RnnParam::kBiasIh;
        out.push_back({pseudo, id, true, rnn_param_index(s, layer, dir, b), gate * H, H, 1});
      }
      if (s.proj_size > 0)
        out.push_back({pseudo, s.gate_matrices(), false, rnn_param_index(s, layer, dir, RnnParam::kWeightHr), 0,
                       s.proj_size, H});
    }
  }
  return out;
}

/// The element count cuDNN reports for a piece must be the block's: a mismatch means the
/// layout is not the one Note [cuDNN RNN weight layout] describes, and copying would scramble
/// the weights.
inline void check_rnn_piece(const RnnWeightPiece& p, int64_t reported_numel) {
  EMBER_CHECK(reported_numel == p.numel(), "cuDNN RNN weight layout: linear layer ", p.lin_layer_id,
              " of pseudo-layer ", p.pseudo_layer, (p.is_bias ? " (bias)" : " (matrix)"), " holds ", reported_numel,
              " elements, expected ", p.numel());
}

/// A block copy between a parameter and the weight space, in elements.
struct RnnCopy {
  int64_t param = 0;
  int64_t param_offset = 0;
  int64_t space_offset = 0;
  int64_t numel = 0;
  bool operator==(const RnnCopy&) const = default;
};

/// The copies sorted by parameter and offset, with each run that continues in both the
/// parameter and the weight space joined into one copy.
inline std::vector<RnnCopy> merge_rnn_copies(std::vector<RnnCopy> copies) {
  std::sort(copies.begin(), copies.end(), [](const RnnCopy& a, const RnnCopy& b) {
    return a.param != b.param ? a.param < b.param : a.param_offset < b.param_offset;
  });
  std::vector<RnnCopy> out;
  for (const RnnCopy& c : copies) {
    if (!out.empty()) {
      RnnCopy& last = out.back();
      if (last.param == c.param && last.param_offset + last.numel == c.param_offset &&
          last.space_offset + last.numel == c.space_offset) {
        last.numel += c.numel;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

/// Checks that the copies of each parameter cover it exactly once, in order, and stay inside a
/// weight space of `space_numel` elements (the invariant packing and unpacking rely on).
inline void check_rnn_copies(const RnnShape& s, const std::vector<RnnCopy>& merged, int64_t space_numel) {
  std::vector<int64_t> covered(static_cast<size_t>(s.num_params()), 0);
  for (const RnnCopy& c : merged) {
    EMBER_CHECK(c.param >= 0 && c.param < s.num_params(), "cuDNN RNN weight layout: bad parameter index ", c.param);
    EMBER_CHECK(c.space_offset >= 0 && c.numel > 0 && c.space_offset + c.numel <= space_numel,
                "cuDNN RNN weight layout: a block of ", c.numel, " elements at ", c.space_offset,
                " leaves the weight space of ", space_numel);
    int64_t& next = covered[static_cast<size_t>(c.param)];
    EMBER_CHECK(c.param_offset == next, "cuDNN RNN weight layout: parameter ", c.param, " is not covered in order");
    next += c.numel;
  }
  for (int64_t layer = 0; layer < s.num_layers; ++layer)
    for (int64_t dir = 0; dir < s.directions(); ++dir)
      for (RnnParam p : {RnnParam::kWeightIh, RnnParam::kWeightHh, RnnParam::kBiasIh, RnnParam::kBiasHh,
                         RnnParam::kWeightHr}) {
        const int64_t i = rnn_param_index(s, layer, dir, p);
        if (i < 0) continue;
        int64_t numel = 1;
        for (int64_t d : rnn_param_shape(s, layer, p)) numel *= d;
        EMBER_CHECK(covered[static_cast<size_t>(i)] == numel, "cuDNN RNN weight layout: parameter ", i, " has ",
                    numel, " elements, the weight space holds ", covered[static_cast<size_t>(i)]);
      }
}

}  // namespace ember::cuda
