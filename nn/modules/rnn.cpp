// RNN / LSTM / GRU layers and cells. On CUDA the layers run as one cuDNN op, _cudnn_rnn
// (core/ops/cudnn_rnn.h), as PyTorch's do, when it applies (see use_cudnn below); otherwise,
// and always for the cells and on the CPU, they are composed from public ops so autograd and
// both devices come for free. Per layer and direction the input projection x W_ih^T + b is one
// matmul over all time steps; each step then does only h W_hh^T and the gate math.
// (The gate math is several small elementwise ops per step; a fused gate op per device would
// cut them to one kernel and its backward to one more: the next step if RNNs get hot on the CPU.)
#include "ember/nn/modules/rnn.h"

#include <cmath>

#include "ember/autograd/function.h"
#include "ember/core/autocast.h"
#include "ember/core/error.h"
#include "ember/core/ops/activation.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/cudnn_rnn.h"
#include "ember/core/ops/dropout.h"
#include "ember/core/ops/linalg.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/ops/unary.h"
#include "ember/nn/init.h"

namespace ember {

// ---- one step of each cell -------------------------------------------------------------
//
// Each step takes xw_t = x_t W_ih^T + b_ih (+ b_hh where it can be folded in), computed for
// all steps at once by the caller, so only the recurrent product is left per step.

namespace {

Tensor rnn_step(const Tensor& xw_t, const Tensor& h, const Tensor& w_hh, bool relu) {
  Tensor pre = addmm(xw_t, h, w_hh.t());
  return relu ? ember::relu(pre) : ember::tanh(pre);
}

// Note [Splitting without per-piece zeros]
// narrow and select record a backward that embeds the piece's gradient in zeros the size of
// the whole. Splitting the input projection xw [T, N, G] into its T steps that way would cost T
// full-size zero fills and T - 1 full-size adds in backward (quadratic in T), and splitting
// each step's gates would cost one [N, G] fill per gate. SplitViews returns the same views,
// and its backward is one cat (or stack) of the pieces' gradients.
struct SplitViews : autograd::Function<SplitViews> {
  /// `pieces` equal views of x along dim: narrowed (keep_dim) or selected (dim dropped).
  static TensorList forward(autograd::AutogradContext* ctx, Tensor x, int64_t dim, int64_t pieces, bool keep_dim) {
    ctx->saved_data["dim"] = dim;
    ctx->saved_data["keep_dim"] = keep_dim;
    const int64_t size = x.size(dim) / pieces;
    TensorList out;
    out.reserve(static_cast<size_t>(pieces));
    for (int64_t i = 0; i < pieces; ++i) out.push_back(keep_dim ? x.narrow(dim, i * size, size) : x.select(dim, i));
    return out;
  }
  static variable_list backward(autograd::AutogradContext* ctx, variable_list grads) {
    const int64_t dim = ctx->saved_data["dim"].toInt();
    Tensor g = ctx->saved_data["keep_dim"].toBool() ? cat(grads, dim) : stack(grads, dim);
    return {g, Tensor(), Tensor(), Tensor()};
  }
};

/// The gate blocks of a [N, k*H] pre-activation, as k [N, H] views.
TensorList gate_blocks(const Tensor& gates, int64_t k) { return SplitViews::apply(gates, int64_t{1}, k, true); }

// Gates i, f, g, o in PyTorch's order along dim 1.
// c' = f * c + i * g, h' = o * tanh(c'), projected through w_hr when the LSTM has one.
std::tuple<Tensor, Tensor> lstm_step(const Tensor& xw_t, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                     const Tensor& w_hr) {
  TensorList g = gate_blocks(addmm(xw_t, h, w_hh.t()), 4);
  Tensor c_next = addcmul(sigmoid(g[1]) * c, sigmoid(g[0]), tanh(g[2]));
  Tensor h_next = sigmoid(g[3]) * tanh(c_next);
  if (w_hr.defined()) h_next = h_next.matmul(w_hr.t());
  return {h_next, c_next};
}

// Gates r, z, n. b_hh stays per step because b_hn sits inside r * (W_hn h + b_hn):
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h = n + z * (h - n).
Tensor gru_step(const Tensor& xw_t, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  TensorList x = gate_blocks(xw_t, 3);
  TensorList hh = gate_blocks(b_hh.defined() ? addmm(b_hh, h, w_hh.t()) : h.matmul(w_hh.t()), 3);
  Tensor r = sigmoid(x[0] + hh[0]);
  Tensor z = sigmoid(x[1] + hh[1]);
  Tensor n = tanh(addcmul(x[2], r, hh[2]));
  return addcmul(n, z, h - n);
}

// x [M, I] W_ih^T + bias, bias undefined for none.
Tensor input_projection(const Tensor& x, const Tensor& w_ih, const Tensor& bias) {
  return bias.defined() ? addmm(bias, x, w_ih.t()) : x.matmul(w_ih.t());
}

// The bias that can be added once to the input projection: b_ih + b_hh for RNN and LSTM,
// b_ih alone for GRU (whose b_hn must stay inside the reset gate's product).
Tensor folded_bias(const Tensor& b_ih, const Tensor& b_hh, bool gru) {
  if (!b_ih.defined()) return {};
  return gru ? b_ih : b_ih + b_hh;
}

// ATen's check_rnn_cell_forward_input / _hidden.
void check_cell_input(const Tensor& input, int64_t input_size) {
  EMBER_CHECK(input.size(1) == input_size, "input has inconsistent input_size: got ", input.size(1), " expected ",
              input_size);
}
void check_cell_hidden(const Tensor& input, const Tensor& hx, int64_t hidden_size, int idx) {
  EMBER_CHECK(input.size(0) == hx.size(0), "Input batch size ", input.size(0), " doesn't match hidden", idx,
              " batch size ", hx.size(0));
  EMBER_CHECK(hx.size(1) == hidden_size, "hidden", idx, " has inconsistent hidden_size: got ", hx.size(1),
              ", expected ", hidden_size);
}

Tensor simple_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                   const Tensor& b_ih, const Tensor& b_hh, bool relu) {
  check_cell_input(input, w_ih.size(1));
  check_cell_hidden(input, hx, w_hh.size(1), 0);
  return rnn_step(input_projection(input, w_ih, folded_bias(b_ih, b_hh, false)), hx, w_hh, relu);
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return simple_cell(input, hx, w_ih, w_hh, b_ih, b_hh, false);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return simple_cell(input, hx, w_ih, w_hh, b_ih, b_hh, true);
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const TensorList& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_CHECK(hx.size() == 2, "lstm_cell expects two hidden states");
  check_cell_input(input, w_ih.size(1));
  check_cell_hidden(input, hx[0], w_hh.size(1), 0);
  check_cell_hidden(input, hx[1], w_hh.size(1), 1);
  return lstm_step(input_projection(input, w_ih, folded_bias(b_ih, b_hh, false)), hx[0], hx[1], w_hh, Tensor());
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  check_cell_input(input, w_ih.size(1));
  check_cell_hidden(input, hx, w_hh.size(1), 0);
  return gru_step(input_projection(input, w_ih, b_ih), hx, w_hh, b_hh);
}

namespace nn {
namespace detail {

// ---- layer stacks ----------------------------------------------------------------------

namespace {

bool is_lstm(const RNNSpec& s) { return s.mode == RNNMode::kLSTM; }
bool is_gru(const RNNSpec& s) { return s.mode == RNNMode::kGRU; }

// Parameters per (layer, direction): w_ih, w_hh, [b_ih, b_hh], [w_hr].
int64_t params_per_cell(const RNNSpec& s) { return 2 + (s.bias ? 2 : 0) + (s.proj_size > 0 ? 1 : 0); }

// The weights of one (layer, direction) out of the flat list.
struct CellWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

CellWeights cell_weights(const RNNSpec& s, const std::vector<Tensor>& flat, int64_t layer, int64_t direction) {
  size_t i = static_cast<size_t>((layer * s.num_directions() + direction) * params_per_cell(s));
  CellWeights w;
  w.w_ih = flat[i++];
  w.w_hh = flat[i++];
  if (s.bias) {
    w.b_ih = flat[i++];
    w.b_hh = flat[i++];
  }
  if (s.proj_size > 0) w.w_hr = flat[i++];
  return w;
}

// Runs one direction of one layer over x [T, N, In]: (output [T, N, Hr], h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> run_direction(const RNNSpec& s, const CellWeights& w, const Tensor& x,
                                                 Tensor h, Tensor c, bool reverse) {
  const int64_t T = x.size(0), N = x.size(1);
  Tensor xw = input_projection(x.reshape({T * N, x.size(2)}), w.w_ih, folded_bias(w.b_ih, w.b_hh, is_gru(s)));
  // One view per step, with one stack in backward (Note [Splitting without per-piece zeros]).
  TensorList xw_steps = SplitViews::apply(xw.view({T, N, -1}), int64_t{0}, T, false);
  TensorList outputs(static_cast<size_t>(T));
  for (int64_t step = 0; step < T; ++step) {
    const int64_t t = reverse ? T - 1 - step : step;
    const Tensor& xw_t = xw_steps[static_cast<size_t>(t)];
    switch (s.mode) {
      case RNNMode::kRNN_TANH: h = rnn_step(xw_t, h, w.w_hh, false); break;
      case RNNMode::kRNN_RELU: h = rnn_step(xw_t, h, w.w_hh, true); break;
      case RNNMode::kLSTM: std::tie(h, c) = lstm_step(xw_t, h, c, w.w_hh, w.w_hr); break;
      case RNNMode::kGRU: h = gru_step(xw_t, h, w.w_hh, w.b_hh); break;
    }
    outputs[static_cast<size_t>(t)] = h;
  }
  return {stack(outputs, 0), h, c};
}

// One direction of one layer over packed rows x [sum of lengths, In]: step t runs on the first
// batch_sizes[t] rows of the state (the sequences still running, longest first); the rows past
// them keep their values, so each sequence ends with the state of its own last step (forward)
// or starts from h0 at its own last step (reverse). Returns (packed output, h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> run_direction_packed(const RNNSpec& s, const CellWeights& w, const Tensor& x,
                                                        const std::vector<int64_t>& batch_sizes, Tensor h, Tensor c,
                                                        bool reverse) {
  const int64_t T = static_cast<int64_t>(batch_sizes.size()), N = h.size(0);
  Tensor xw = input_projection(x, w.w_ih, folded_bias(w.b_ih, w.b_hh, is_gru(s)));
  std::vector<int64_t> offsets(batch_sizes.size(), 0);
  for (size_t t = 1; t < batch_sizes.size(); ++t) offsets[t] = offsets[t - 1] + batch_sizes[t - 1];
  TensorList outputs(static_cast<size_t>(T));
  auto merge = [N](const Tensor& active, const Tensor& all, int64_t bs) {
    return bs == N ? active : cat({active, all.narrow(0, bs, N - bs)}, 0);
  };
  for (int64_t step = 0; step < T; ++step) {
    const size_t t = static_cast<size_t>(reverse ? T - 1 - step : step);
    const int64_t bs = batch_sizes[t];
    Tensor xw_t = xw.narrow(0, offsets[t], bs);
    Tensor h_t = h.narrow(0, 0, bs), c_t = c.defined() ? c.narrow(0, 0, bs) : Tensor();
    switch (s.mode) {
      case RNNMode::kRNN_TANH: h_t = rnn_step(xw_t, h_t, w.w_hh, false); break;
      case RNNMode::kRNN_RELU: h_t = rnn_step(xw_t, h_t, w.w_hh, true); break;
      case RNNMode::kLSTM: std::tie(h_t, c_t) = lstm_step(xw_t, h_t, c_t, w.w_hh, w.w_hr); break;
      case RNNMode::kGRU: h_t = gru_step(xw_t, h_t, w.w_hh, w.b_hh); break;
    }
    outputs[t] = h_t;
    h = merge(h_t, h, bs);
    if (c.defined()) c = merge(c_t, c, bs);
  }
  return {cat(outputs, 0), h, c};
}

std::string python_tuple(std::initializer_list<int64_t> v) {
  std::string s = "(";
  for (auto it = v.begin(); it != v.end(); ++it) s += (it == v.begin() ? "" : ", ") + std::to_string(*it);
  return s + ")";
}

std::string python_list(IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// PyTorch's RNNBase.check_input and check_hidden_size, for a batched input.
void check_forward_args(const RNNSpec& s, const std::vector<Tensor>& weights, const Tensor& input, const Tensor& hx,
                        const Tensor& cx) {
  if (!autocast::is_active())
    EMBER_CHECK(input.dtype() == weights[0].dtype(), "input must have the type ", dtype_name(weights[0].dtype()),
                ", got type ", dtype_name(input.dtype()));
  EMBER_CHECK(input.dim() == 3, "input must have 3 dimensions, got ", input.dim());
  EMBER_CHECK(input.size(-1) == s.input_size, "input.size(-1) must be equal to input_size. Expected ", s.input_size,
              ", got ", input.size(-1));
  const int64_t batch = input.size(s.batch_first ? 0 : 1), layers = s.num_layers * s.num_directions();
  auto check = [&](const Tensor& state, int64_t size, const char* what) {
    bool ok = state.dim() == 3 && state.size(0) == layers && state.size(1) == batch && state.size(2) == size;
    EMBER_CHECK(ok, "Expected ", what, " size ", python_tuple({layers, batch, size}), ", got ",
                python_list(state.sizes()));
  };
  if (is_lstm(s)) {
    check(hx, s.real_hidden_size(), "hidden[0]");
    check(cx, s.hidden_size, "hidden[1]");
  } else {
    check(hx, s.hidden_size, "hidden");
  }
}

cuda::RnnShape cudnn_shape(const RNNSpec& s) {
  cuda::RnnCell cell = cuda::RnnCell::kRnnTanh;
  switch (s.mode) {
    case RNNMode::kRNN_TANH: cell = cuda::RnnCell::kRnnTanh; break;
    case RNNMode::kRNN_RELU: cell = cuda::RnnCell::kRnnRelu; break;
    case RNNMode::kLSTM: cell = cuda::RnnCell::kLstm; break;
    case RNNMode::kGRU: cell = cuda::RnnCell::kGru; break;
  }
  return {cell, s.input_size, s.hidden_size, s.proj_size, s.num_layers, s.bidirectional, s.bias};
}

// Whether the stack runs as cuDNN's RNN (x time-major). Dropout between layers stays in the
// composition while training: cuDNN would draw its masks from its own generator, not ember's,
// so manual_seed would not reproduce them and they would differ from the CPU's.
bool use_cudnn(const RNNSpec& s, const std::vector<Tensor>& weights, const Tensor& x, const Tensor& hx,
               const Tensor& cx, bool training) {
  if (training && s.dropout > 0 && s.num_layers > 1) return false;
  return _use_cudnn_rnn(cudnn_shape(s), x, weights, hx, cx);
}

}  // namespace

int64_t RNNSpec::gate_size() const {
  switch (mode) {
    case RNNMode::kLSTM: return 4 * hidden_size;
    case RNNMode::kGRU: return 3 * hidden_size;
    default: return hidden_size;
  }
}

void check_rnn_spec(const RNNSpec& s) {
  EMBER_CHECK(s.dropout >= 0 && s.dropout <= 1,
              "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  EMBER_CHECK(s.hidden_size > 0, "hidden_size must be greater than zero");
  EMBER_CHECK(s.num_layers > 0, "num_layers must be greater than zero");
  EMBER_CHECK(s.proj_size >= 0, "proj_size should be a positive integer or zero to disable projections");
  EMBER_CHECK(s.proj_size < s.hidden_size, "proj_size has to be smaller than hidden_size");
}

std::vector<Tensor> register_rnn_parameters(Module& module, const RNNSpec& s) {
  std::vector<Tensor> flat;
  const int64_t G = s.gate_size(), Hr = s.real_hidden_size();
  for (int64_t layer = 0; layer < s.num_layers; ++layer) {
    const int64_t in = layer == 0 ? s.input_size : Hr * s.num_directions();
    for (int64_t direction = 0; direction < s.num_directions(); ++direction) {
      const std::string suffix = "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
      flat.push_back(module.register_parameter("weight_ih" + suffix, ember::empty({G, in})));
      flat.push_back(module.register_parameter("weight_hh" + suffix, ember::empty({G, Hr})));
      if (s.bias) {
        flat.push_back(module.register_parameter("bias_ih" + suffix, ember::empty({G})));
        flat.push_back(module.register_parameter("bias_hh" + suffix, ember::empty({G})));
      }
      if (s.proj_size > 0)
        flat.push_back(module.register_parameter("weight_hr" + suffix, ember::empty({s.proj_size, s.hidden_size})));
    }
  }
  reset_rnn_parameters(flat, s.hidden_size);
  return flat;
}

void reset_rnn_parameters(std::vector<Tensor>& weights, int64_t hidden_size) {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& w : weights) init::uniform_(w, -stdv, stdv);
}

void print_rnn(std::ostream& os, const std::string& name, const RNNSpec& s) {
  os << name << "(" << s.input_size << ", " << s.hidden_size;
  if (s.proj_size != 0) os << ", proj_size=" << s.proj_size;
  if (s.num_layers != 1) os << ", num_layers=" << s.num_layers;
  if (!s.bias) os << ", bias=False";
  if (s.batch_first) os << ", batch_first=True";
  if (s.dropout != 0) os << ", dropout=" << python_float(s.dropout);
  if (s.bidirectional) os << ", bidirectional=True";
  os << ")";
}

std::tuple<Tensor, Tensor, Tensor> rnn_forward(const RNNSpec& s, const std::vector<Tensor>& weights,
                                               const Tensor& input, const Tensor& hx_in, const Tensor& cx_in,
                                               bool training) {
  const int64_t D = s.num_directions(), L = s.num_layers;
  EMBER_CHECK(input.dim() == 3, "input must have 3 dimensions, got ", input.dim());
  const int64_t batch = input.size(s.batch_first ? 0 : 1);
  TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
  Tensor hx = hx_in.defined() ? hx_in : ember::zeros({L * D, batch, s.real_hidden_size()}, opts);
  Tensor cx = cx_in;
  if (is_lstm(s) && !cx.defined()) cx = ember::zeros({L * D, batch, s.hidden_size}, opts);
  check_forward_args(s, weights, input, hx, cx);

  Tensor x = s.batch_first ? input.transpose(0, 1) : input;  // time-major from here on
  EMBER_CHECK(x.size(0) > 0, "Expected sequence length to be larger than 0 in RNN");
  if (use_cudnn(s, weights, x, hx, cx, training)) {
    auto [y, h_n, c_n] = _cudnn_rnn(x, weights, hx, is_lstm(s) ? cx : Tensor(), cudnn_shape(s));
    return {s.batch_first ? y.transpose(0, 1) : y, h_n, c_n};
  }
  TensorList h0 = SplitViews::apply(hx, int64_t{0}, L * D, false);
  TensorList c0 = is_lstm(s) ? SplitViews::apply(cx, int64_t{0}, L * D, false) : TensorList(h0.size());
  TensorList h_n, c_n;
  for (int64_t layer = 0; layer < L; ++layer) {
    TensorList outputs;
    for (int64_t direction = 0; direction < D; ++direction) {
      const size_t idx = static_cast<size_t>(layer * D + direction);
      auto [out, h, c] =
          run_direction(s, cell_weights(s, weights, layer, direction), x, h0[idx], c0[idx], direction == 1);
      outputs.push_back(out);
      h_n.push_back(h);
      if (is_lstm(s)) c_n.push_back(c);
    }
    x = D == 1 ? outputs[0] : cat(outputs, 2);
    // PyTorch drops out between layers only: never after the last one, never in eval.
    if (s.dropout > 0 && training && layer + 1 < L) x = ember::dropout(x, s.dropout, true);
  }
  Tensor output = s.batch_first ? x.transpose(0, 1) : x;
  return {output, stack(h_n, 0), is_lstm(s) ? stack(c_n, 0) : Tensor()};
}

std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> rnn_forward_packed(const RNNSpec& s,
                                                                          const std::vector<Tensor>& weights,
                                                                          const utils::rnn::PackedSequence& input,
                                                                          Tensor hx, Tensor cx, bool training) {
  const int64_t D = s.num_directions(), L = s.num_layers;
  const Tensor& data = input.data();
  EMBER_CHECK(data.dim() == 2, "packed input data must have 2 dimensions, got ", data.dim());
  Tensor sizes = input.batch_sizes().to(kInt64).contiguous();
  std::vector<int64_t> batch_sizes(sizes.data_ptr<int64_t>(), sizes.data_ptr<int64_t>() + sizes.numel());
  EMBER_CHECK(!batch_sizes.empty(), "Expected sequence length to be larger than 0 in RNN");
  const int64_t batch = batch_sizes[0];
  TensorOptions opts = TensorOptions().dtype(data.dtype()).device(data.device());
  // States arrive in the caller's batch order; the packed rows are sorted by length.
  const Tensor& sorted = input.sorted_indices();
  if (hx.defined() && sorted.defined()) hx = hx.index_select(1, sorted);
  if (cx.defined() && sorted.defined()) cx = cx.index_select(1, sorted);
  if (!hx.defined()) hx = ember::zeros({L * D, batch, s.real_hidden_size()}, opts);
  if (is_lstm(s) && !cx.defined()) cx = ember::zeros({L * D, batch, s.hidden_size}, opts);
  RNNSpec time_major = s;
  time_major.batch_first = false;
  check_forward_args(time_major, weights, data.narrow(0, 0, batch).unsqueeze(0), hx, cx);

  TensorList h0 = SplitViews::apply(hx, int64_t{0}, L * D, false);
  TensorList c0 = is_lstm(s) ? SplitViews::apply(cx, int64_t{0}, L * D, false) : TensorList(h0.size());
  TensorList h_n, c_n;
  Tensor x = data;
  for (int64_t layer = 0; layer < L; ++layer) {
    TensorList outputs;
    for (int64_t direction = 0; direction < D; ++direction) {
      const size_t idx = static_cast<size_t>(layer * D + direction);
      auto [out, h, c] = run_direction_packed(s, cell_weights(s, weights, layer, direction), x, batch_sizes, h0[idx],
                                              c0[idx], direction == 1);
      outputs.push_back(out);
      h_n.push_back(h);
      if (is_lstm(s)) c_n.push_back(c);
    }
    x = D == 1 ? outputs[0] : cat(outputs, 1);
    if (s.dropout > 0 && training && layer + 1 < L) x = ember::dropout(x, s.dropout, true);
  }
  Tensor h_out = stack(h_n, 0), c_out = is_lstm(s) ? stack(c_n, 0) : Tensor();
  const Tensor& unsorted = input.unsorted_indices();
  if (unsorted.defined()) {
    h_out = h_out.index_select(1, unsorted);
    if (c_out.defined()) c_out = c_out.index_select(1, unsorted);
  }
  return {utils::rnn::PackedSequence(x, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()), h_out,
          c_out};
}

// ---- cells -----------------------------------------------------------------------------

template <class Derived>
void RNNCellImplBase<Derived>::reset() {
  const int64_t G = num_chunks_ * hidden_size_;
  weight_ih = this->register_parameter("weight_ih", ember::empty({G, input_size_}));
  weight_hh = this->register_parameter("weight_hh", ember::empty({G, hidden_size_}));
  if (bias_) {
    bias_ih = this->register_parameter("bias_ih", ember::empty({G}));
    bias_hh = this->register_parameter("bias_hh", ember::empty({G}));
  } else {
    bias_ih = this->register_parameter("bias_ih", Tensor(), false);
    bias_hh = this->register_parameter("bias_hh", Tensor(), false);
  }
  reset_parameters();
}

template <class Derived>
void RNNCellImplBase<Derived>::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(hidden_size_));
  for (Tensor* w : {&weight_ih, &weight_hh, &bias_ih, &bias_hh})
    if (w->defined()) init::uniform_(*w, -stdv, stdv);
}

template <class Derived>
void RNNCellImplBase<Derived>::pretty_print(std::ostream& os) const {
  os << this->name() << "(" << input_size_ << ", " << hidden_size_;
  if (!bias_) os << ", bias=False";
  std::string nl = nonlinearity_str();
  if (!nl.empty() && nl != "tanh") os << ", nonlinearity=" << nl;
  os << ")";
}

template <class Derived>
void RNNCellImplBase<Derived>::check_input_dim(const std::string& cell, const Tensor& input) const {
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, cell, ": Expected input to be 1D or 2D, got ", input.dim(),
              "D instead");
}

template class RNNCellImplBase<RNNCellImpl>;
template class RNNCellImplBase<LSTMCellImpl>;
template class RNNCellImplBase<GRUCellImpl>;

}  // namespace detail

// ---- RNN / LSTM / GRU ------------------------------------------------------------------

namespace {

// The Python forward's unbatched handling: a 2-D input gains a batch dim (at 0 with
// batch_first, else at 1) and its 2-D states gain one at 1; outputs lose them again.
Tensor batched_input(const Tensor& input, bool batch_first) {
  return input.dim() == 3 ? input : input.unsqueeze(batch_first ? 0 : 1);
}

void check_layer_input_dim(const char* name, const Tensor& input, const char* tail) {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, name, ": Expected input to be 2D or 3D, got ", input.dim(),
              "D", tail);
}

void check_state_dim(const Tensor& hx, bool batched) {
  if (batched)
    EMBER_CHECK(hx.dim() == 3, "For batched 3-D input, hx should also be 3-D but got ", hx.dim(), "-D tensor");
  else
    EMBER_CHECK(hx.dim() == 2, "For unbatched 2-D input, hx should also be 2-D but got ", hx.dim(), "-D tensor");
}

std::tuple<Tensor, Tensor> single_state_forward(const detail::RNNSpec& s, const char* name, const char* tail,
                                                const std::vector<Tensor>& weights, const Tensor& input, Tensor hx,
                                                bool training) {
  check_layer_input_dim(name, input, tail);
  const bool batched = input.dim() == 3;
  if (hx.defined()) {
    check_state_dim(hx, batched);
    if (!batched) hx = hx.unsqueeze(1);
  }
  auto [output, h_n, c_n] = detail::rnn_forward(s, weights, batched_input(input, s.batch_first), hx, {}, training);
  (void)c_n;
  if (batched) return {output, h_n};
  return {output.squeeze(s.batch_first ? 0 : 1), h_n.squeeze(1)};
}

}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options_) : options(options_) { reset(); }

detail::RNNSpec RNNImpl::spec_of(const RNNOptions& o) {
  auto mode = holds<enumtype::kReLU>(o.nonlinearity()) ? detail::RNNMode::kRNN_RELU : detail::RNNMode::kRNN_TANH;
  return {mode, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
          o.bidirectional(), 0};
}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  return single_state_forward(spec_, "RNN", " tensor instead", flat_weights_, input, std::move(hx), is_training());
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [output, h_n, unused] = detail::rnn_forward_packed(spec_, flat_weights_, packed_input, hx, {}, is_training());
  return {output, h_n};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_) : options(options_) { reset(); }

detail::RNNSpec LSTMImpl::spec_of(const LSTMOptions& o) {
  return {detail::RNNMode::kLSTM, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(),
          o.dropout(), o.bidirectional(), o.proj_size()};
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  check_layer_input_dim("LSTM", input, " instead");
  const bool batched = input.dim() == 3;
  Tensor hx, cx;
  if (hx_opt) {
    std::tie(hx, cx) = *hx_opt;
    const int64_t want = batched ? 3 : 2;
    EMBER_CHECK(hx.dim() == want && cx.dim() == want, "For ", batched ? "batched 3-D" : "unbatched 2-D",
                " input, hx and cx should also be ", want, "-D but got (", hx.dim(), "-D, ", cx.dim(), "-D) tensors");
    if (!batched) {
      hx = hx.unsqueeze(1);
      cx = cx.unsqueeze(1);
    }
  }
  auto [output, h_n, c_n] =
      detail::rnn_forward(spec_, flat_weights_, batched_input(input, spec_.batch_first), hx, cx, is_training());
  if (batched) return {output, {h_n, c_n}};
  return {output.squeeze(spec_.batch_first ? 0 : 1), {h_n.squeeze(1), c_n.squeeze(1)}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  Tensor hx, cx;
  if (hx_opt) std::tie(hx, cx) = *hx_opt;
  auto [output, h_n, c_n] = detail::rnn_forward_packed(spec_, flat_weights_, packed_input, hx, cx, is_training());
  return {output, {h_n, c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& options_) : options(options_) { reset(); }

detail::RNNSpec GRUImpl::spec_of(const GRUOptions& o) {
  return {detail::RNNMode::kGRU, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(),
          o.dropout(), o.bidirectional(), 0};
}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  return single_state_forward(spec_, "GRU", " instead", flat_weights_, input, std::move(hx), is_training());
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [output, h_n, unused] = detail::rnn_forward_packed(spec_, flat_weights_, packed_input, hx, {}, is_training());
  return {output, h_n};
}

// ---- RNNCell / LSTMCell / GRUCell --------------------------------------------------------

namespace {

void check_state_dim_1d_2d(const std::string& cell, const Tensor& state, const std::string& what) {
  EMBER_CHECK(state.dim() == 1 || state.dim() == 2, cell, ": Expected ", what, " to be 1D or 2D, got ", state.dim(),
              "D instead");
}

// A missing state is zeros [N, H]; an unbatched one gains its batch dim.
Tensor batched_state(const Tensor& state, const Tensor& input, int64_t hidden_size, bool batched) {
  if (!state.defined())
    return ember::zeros({input.size(0), hidden_size}, TensorOptions().dtype(input.dtype()).device(input.device()));
  return batched ? state : state.unsqueeze(0);
}

}  // namespace

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options_)
    : RNNCellImplBase(options_.input_size(), options_.hidden_size(), options_.bias(), 1), options(options_) {
  reset();
}

std::string RNNCellImpl::nonlinearity_str() const { return enum_name(options.nonlinearity()); }

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  check_input_dim("RNNCell", input);
  if (hx.defined()) check_state_dim_1d_2d("RNNCell", hx, "hidden");
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor h = batched_state(hx, x, options.hidden_size(), batched);
  Tensor out = holds<enumtype::kReLU>(options.nonlinearity())
                   ? rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                   : rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return batched ? out : out.squeeze(0);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options_)
    : RNNCellImplBase(options_.input_size(), options_.hidden_size(), options_.bias(), 4), options(options_) {
  reset();
}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  check_input_dim("LSTMCell", input);
  Tensor hx, cx;
  if (hx_opt) {
    std::tie(hx, cx) = *hx_opt;
    check_state_dim_1d_2d("LSTMCell", hx, "hx[0]");
    check_state_dim_1d_2d("LSTMCell", cx, "hx[1]");
  }
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  TensorList state{batched_state(hx, x, options.hidden_size(), batched),
                   batched_state(cx, x, options.hidden_size(), batched)};
  auto [h, c] = lstm_cell(x, state, weight_ih, weight_hh, bias_ih, bias_hh);
  if (batched) return {h, c};
  return {h.squeeze(0), c.squeeze(0)};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options_)
    : RNNCellImplBase(options_.input_size(), options_.hidden_size(), options_.bias(), 3), options(options_) {
  reset();
}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  check_input_dim("GRUCell", input);
  if (hx.defined()) check_state_dim_1d_2d("GRUCell", hx, "hidden");
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor out = gru_cell(x, batched_state(hx, x, options.hidden_size(), batched), weight_ih, weight_hh, bias_ih,
                        bias_hh);
  return batched ? out : out.squeeze(0);
}

}  // namespace nn
}  // namespace ember
