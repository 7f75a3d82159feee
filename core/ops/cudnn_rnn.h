// _cudnn_rnn: a whole RNN / LSTM / GRU layer stack as one op on cuDNN (cuda/rnn.h), the op
// PyTorch's recurrent layers run on CUDA (grad_fn CudnnRnnBackward0). nn/modules/rnn.cpp takes
// it when _use_cudnn_rnn says so and composes the layers from public ops otherwise.
#pragma once

#include <tuple>

#include "ember/core/tensor.h"
#include "ember/cuda/rnn_plan.h"

namespace ember {

/// Whether _cudnn_rnn can run this call: cuDNN built and ember::backends::cudnn::enabled, no
/// autocast, a CUDA input of float32, float64 or float16 (PyTorch's cudnn_is_acceptable:
/// bfloat16 runs composed), hx / cx / every weight of the input's dtype and device, and sizes
/// cuDNN's 32-bit descriptors hold. `input` is time-major [T, N, input_size].
bool _use_cudnn_rnn(const cuda::RnnShape& shape, const Tensor& input, const TensorList& weights, const Tensor& hx,
                    const Tensor& cx);

/// The stack of `shape` on a time-major input [T, N, input_size] with PyTorch's flat weight
/// list (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0, ..._reverse, layer by
/// layer) and initial states hx [L*D, N, out_size], cx [L*D, N, hidden_size] (LSTM; undefined
/// otherwise). Returns (output [T, N, D*out_size], h_n, c_n), c_n undefined unless LSTM. When a
/// gradient is recorded, cuDNN runs in training mode and keeps its reserve for backward; its
/// backward has no derivative (PyTorch's double-backward error).
std::tuple<Tensor, Tensor, Tensor> _cudnn_rnn(const Tensor& input, const TensorList& weights, const Tensor& hx,
                                              const Tensor& cx, const cuda::RnnShape& shape);

}  // namespace ember
