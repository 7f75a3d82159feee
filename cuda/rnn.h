// cuDNN's multi-layer RNN / LSTM / GRU (the v8 API: cudnnRNNForward, cudnnRNNBackwardData_v8,
// cudnnRNNBackwardWeights_v8), the kernels of ember's _cudnn_rnn op (core/ops/cudnn_rnn.cpp).
// Plain C++ declarations; defined in cuda/rnn.cpp (cuDNN), cuda/rnn_no_cudnn.cpp (a CUDA build
// configured with -DEMBER_CUDNN=OFF) or cuda/no_cuda.cpp (no CUDA).
//
// Every call takes contiguous CUDA tensors of one dtype (float32, float64 or float16; float16
// computes in float), time-major: x [T, N, input_size], y [T, N, directions * out_size],
// hx / hy [num_layers * directions, N, out_size], cx / cy [num_layers * directions, N,
// hidden_size] (LSTM only; undefined otherwise). The weights travel in cuDNN's opaque weight
// space, a byte buffer that rnn_forward fills from PyTorch's parameters (Note [cuDNN RNN weight
// layout] in cuda/rnn_plan.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/cuda/rnn_plan.h"

namespace ember::cuda {

/// Whether this build has cuDNN's RNN (false in a build without CUDA or without cuDNN).
bool cudnn_rnn_available();

/// The buffers one call needs, in bytes.
struct RnnSpaces {
  int64_t weight_bytes = 0;   // the weight space (and its gradient)
  int64_t reserve_bytes = 0;  // kept from a training forward for backward; 0 for inference
};

/// The sizes for a stack of `shape` on a [T, N, input_size] input of `dtype` on the current
/// device. `training`: the forward keeps a reserve for backward (cuDNN's training mode).
RnnSpaces rnn_spaces(const RnnShape& shape, ScalarType dtype, int64_t T, int64_t N, bool training);

/// Runs the stack: copies `weights` (PyTorch's flat list, contiguous) into `weight_space`
/// (uint8, RnnSpaces::weight_bytes), then writes y, hy and (LSTM) cy. `reserve` (uint8,
/// RnnSpaces::reserve_bytes) is filled for backward when it is not empty (training mode).
void rnn_forward(const RnnShape& shape, const Tensor& x, const Tensor& hx, const Tensor& cx,
                 const TensorList& weights, const Tensor& weight_space, const Tensor& y, const Tensor& hy,
                 const Tensor& cy, const Tensor& reserve);

/// Gradients of a training forward: dx, dhx, dcx (LSTM) from dy, dhy, dcy; dw (dtype,
/// weight_bytes / element size elements) the weights' gradient in weight-space layout
/// (rnn_weight_copies says where each parameter's lies; an empty dw skips it). `reserve` is
/// not changed (cuDNN writes into it, so a copy is used and a second backward sees the
/// forward's).
void rnn_backward(const RnnShape& shape, const Tensor& x, const Tensor& hx, const Tensor& cx, const Tensor& y,
                  const Tensor& dy, const Tensor& dhy, const Tensor& dcy, const Tensor& weight_space,
                  const Tensor& reserve, const Tensor& dx, const Tensor& dhx, const Tensor& dcx, const Tensor& dw);

/// Where each of PyTorch's parameters lies in a weight space of `shape` and `dtype` (element
/// offsets), merged and checked (merge_rnn_copies, check_rnn_copies); cached per shape.
std::vector<RnnCopy> rnn_weight_copies(const RnnShape& shape, ScalarType dtype);

}  // namespace ember::cuda
