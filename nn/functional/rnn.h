// One step of each recurrent cell, as ATen's functions libtorch exposes (torch::rnn_tanh_cell,
// torch::rnn_relu_cell, torch::lstm_cell, torch::gru_cell): a batch input [N, input_size],
// the state(s) [N, hidden_size] and PyTorch's weight layout (gates stacked along dim 0 of
// w_ih / w_hh: i,f,g,o for LSTM, r,z,n for GRU). The cell and layer modules are built on them.
#pragma once

#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh).
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// (h', c') of an LSTM step; hx = {h, c}.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const TensorList& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// h' of a GRU step: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});

}  // namespace ember
