// _cudnn_rnn: one op for a whole recurrent stack on cuDNN, and its backward, as PyTorch's
// _cudnn_rnn / _cudnn_rnn_backward. The forward's extra outputs are cuDNN's reserve (what the
// training forward kept for backward) and the weight space it ran with, both bytes; they are
// saved for backward like PyTorch's result3 / result4 and freed with the graph. Backward is one
// more op whose weight gradient comes back in weight-space layout and is cut into per-parameter
// gradients with public ops (narrow, cat, view).
#include "ember/core/ops/cudnn_rnn.h"

#include <algorithm>
#include <climits>

#include "ember/core/autocast.h"
#include "ember/core/backends.h"
#include "ember/core/op.h"
#include "ember/core/ops/shape.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/rnn.h"

namespace ember {
namespace {

using cuda::RnnCell;
using cuda::RnnShape;

// PyTorch's kCudnnDoubleBackwardMsg, after not_implemented's "the derivative for ... is not
// implemented." (cuDNN has no derivative of its RNN backward).
constexpr const char* kCudnnDoubleBackwardMsg =
    "Double backwards is not supported for CuDNN RNNs due to limitations in the CuDNN API. To run double "
    "backwards, please disable the CuDNN backend temporarily while running the forward pass of your RNN. For "
    "example: \nwith torch.backends.cudnn.flags(enabled=False):\n    output = model(inputs)";

bool is_lstm(const RnnShape& s) { return s.cell == RnnCell::kLstm; }

/// The forward op's outputs are y, hy, [cy], reserve, weight space: where the reserve sits.
size_t reserve_index(const RnnShape& s) { return is_lstm(s) ? 3 : 2; }

[[noreturn]] void cuda_only(const char* op) {
  detail::throw_error(detail::str_cat("\"", op, "\" is implemented for CUDA tensors only (cuDNN)"));
}

// in: x, hx, cx, dy, dhy, dcy, y, weight space, reserve (cx, dcy undefined unless LSTM), then
// the weights, which the kernel does not read: they are inputs so that a node recorded under
// create_graph has their edges and a second derivative reaches this op's error, as PyTorch's.
// out: dx, dhx, [dcx], dw (the weights' gradient in weight-space layout; empty when no weight
// needs one).
struct CudnnRnnBackward final : Op {
  RnnShape shape;
  explicit CudnnRnnBackward(const RnnShape& s) : shape(s) {}
  const char* name() const override { return "_cudnn_rnn_backward"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList&, TensorList&) const override { cuda_only(name()); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::rnn_backward(shape, in[0], in[1], in[2], in[6], in[3], in[4], in[5], in[7], in[8], out[0], out[1],
                       is_lstm(shape) ? out[2] : Tensor(), out.back());
  }
  TensorList backward(const SavedTensors&, const TensorList&) const override {
    detail::throw_error(
        detail::str_cat("the derivative for '", name(), "' is not implemented. ", kCudnnDoubleBackwardMsg));
  }
};

/// Each weight's gradient cut out of dw (Note [cuDNN RNN weight layout]); undefined for the
/// weights that need none. Weight i is the forward's input 3 + i.
TensorList weight_grads(const RnnShape& s, const Tensor& dw, const SavedTensors& saved) {
  cuda::DeviceGuard guard(dw.device());
  std::vector<TensorList> pieces(static_cast<size_t>(s.num_params()));
  for (const cuda::RnnCopy& c : cuda::rnn_weight_copies(s, dw.dtype()))  // by parameter, in order
    pieces[static_cast<size_t>(c.param)].push_back(dw.narrow(0, c.space_offset, c.numel));
  TensorList out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!saved.needs_grad(3 + i)) {
      out.emplace_back();
      continue;
    }
    Tensor flat = pieces[i].size() == 1 ? pieces[i][0] : cat(pieces[i], 0);
    out.push_back(flat.view(saved.input_sizes(3 + i)));
  }
  return out;
}

// in: x, hx, cx (undefined unless LSTM), then the weights (contiguous); out: y, hy, [cy],
// reserve, weight space (Note [cuDNN RNN weight layout] in cuda/rnn_plan.h).
struct CudnnRnn final : Op {
  RnnShape shape;
  bool training;  // cuDNN's training mode: the reserve is kept, backward can run
  CudnnRnn(const RnnShape& s, bool t) : shape(s), training(t) {}
  const char* name() const override { return "_cudnn_rnn"; }
  Save saves() const override { return Save::kBoth; }
  void cpu(const TensorList&, TensorList&) const override { cuda_only(name()); }
  void cuda(const TensorList& in, TensorList& out) const override {
    const size_t r = reserve_index(shape);
    const TensorList weights(in.begin() + 3, in.end());
    cuda::rnn_forward(shape, in[0], in[1], in[2], weights, out[r + 1], out[0], out[1],
                      is_lstm(shape) ? out[2] : Tensor(), out[r]);
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    EMBER_CHECK(training, "cudnn RNN backward can only be called in training mode");
    const bool lstm = is_lstm(shape);
    const size_t r = reserve_index(shape);
    Tensor x = s.input(0), hx = s.input(1), cx = lstm ? s.input(2) : Tensor(), space = s.output(r + 1);
    TensorList in{x, hx, cx, grads[0].contiguous(), grads[1].contiguous(), lstm ? grads[2].contiguous() : Tensor(),
                  s.output(0), space, s.output(r)};
    for (int64_t i = 0; i < shape.num_params(); ++i) in.push_back(s.input(3 + static_cast<size_t>(i)));
    bool need_weights = false;  // a frozen stack skips cuDNN's weight gradient (dw stays empty)
    for (int64_t i = 0; i < shape.num_params(); ++i) need_weights = need_weights || s.needs_grad(3 + i);
    std::vector<OutSpec> specs{{DimVector(x.sizes()), x.dtype()}, {DimVector(hx.sizes()), x.dtype()}};
    if (lstm) specs.push_back({DimVector(cx.sizes()), x.dtype()});
    specs.push_back({DimVector{need_weights ? space.numel() / x.element_size() : 0}, x.dtype()});
    TensorList g = run_op(CudnnRnnBackward(shape), in, specs);
    TensorList out{g[0], g[1], lstm ? g[2] : Tensor()};
    if (!need_weights) {
      out.resize(out.size() + static_cast<size_t>(shape.num_params()));
      return out;
    }
    for (Tensor& w : weight_grads(shape, g.back(), s)) out.push_back(std::move(w));
    return out;
  }
};

bool cudnn_dtype(ScalarType t) { return t == kFloat || t == kDouble || t == kHalf; }

bool fits_int32(int64_t v) { return v >= 0 && v <= INT_MAX; }

/// PyTorch's check_attributes: every tensor of the input's dtype and device.
void check_attributes(const Tensor& input, const TensorList& weights, const Tensor& hx, const Tensor& cx) {
  auto check = [&](const Tensor& t, const char* what) {
    EMBER_CHECK(t.dtype() == input.dtype(), "Input and ", what,
                " tensors are not the same dtype, found input tensor with ", scalar_type_name(input.dtype()), " and ",
                what, " tensor with ", scalar_type_name(t.dtype()));
    EMBER_CHECK(t.device() == input.device(), "Input and ", what,
                " tensors are not at the same device, found input tensor at ", input.device(), " and ", what,
                " tensor at ", t.device());
  };
  for (const Tensor& w : weights) check(w, "parameter");
  check(hx, "hidden");
  if (cx.defined()) check(cx, "hidden");
}

/// The checks a direct call needs (the layers have made them already, in PyTorch's words).
void check_call(const RnnShape& s, const Tensor& input, const TensorList& weights, const Tensor& hx,
                const Tensor& cx) {
  EMBER_CHECK(input.dim() == 3, "_cudnn_rnn: expected a time-major 3-D input, got ", input.dim(), "-D");
  EMBER_CHECK(input.device().is_cuda(), "_cudnn_rnn: expected CUDA tensors, got ", input.device());
  EMBER_CHECK(cudnn_dtype(input.dtype()), "_cudnn_rnn: cuDNN's RNN takes float32, float64 or float16, got ",
              scalar_type_name(input.dtype()));
  EMBER_CHECK(static_cast<int64_t>(weights.size()) == s.num_params(), "_cudnn_rnn: expected ", s.num_params(),
              " weights, got ", weights.size());
  EMBER_CHECK(hx.defined(), "_cudnn_rnn: hx must be given");
  EMBER_CHECK(is_lstm(s) || !cx.defined(), "rnn: illegal defined cx for non-LSTM RNN");
  EMBER_CHECK(!is_lstm(s) || cx.defined(), "_cudnn_rnn: an LSTM needs cx");
  check_attributes(input, weights, hx, cx);
  EMBER_CHECK(input.size(2) == s.input_size, "_cudnn_rnn: input.size(-1) must be ", s.input_size, ", got ",
              input.size(2));
  const int64_t N = input.size(1), layers = s.num_layers * s.directions();
  EMBER_CHECK(hx.sizes().equals({layers, N, s.out_size()}), "Expected hidden size ",
              IntArrayRef({layers, N, s.out_size()}), ", got ", hx.sizes());
  EMBER_CHECK(!cx.defined() || cx.sizes().equals({layers, N, s.hidden_size}), "Expected cell size ",
              IntArrayRef({layers, N, s.hidden_size}), ", got ", cx.sizes());
  for (int64_t layer = 0; layer < s.num_layers; ++layer)
    for (int64_t dir = 0; dir < s.directions(); ++dir)
      for (cuda::RnnParam p : {cuda::RnnParam::kWeightIh, cuda::RnnParam::kWeightHh, cuda::RnnParam::kBiasIh,
                               cuda::RnnParam::kBiasHh, cuda::RnnParam::kWeightHr}) {
        const int64_t i = cuda::rnn_param_index(s, layer, dir, p);
        if (i < 0) continue;
        const std::vector<int64_t> want = cuda::rnn_param_shape(s, layer, p);
        const Tensor& w = weights[static_cast<size_t>(i)];
        EMBER_CHECK(w.sizes().equals(want), "_cudnn_rnn: weight ", i, " should have shape ", IntArrayRef(want),
                    ", got ", w.sizes());
      }
}

}  // namespace

bool _use_cudnn_rnn(const RnnShape& s, const Tensor& input, const TensorList& weights, const Tensor& hx,
                    const Tensor& cx) {
  if (!backends::cudnn::enabled || autocast::is_active() || !cuda::cudnn_rnn_available()) return false;
  if (input.dim() != 3 || !input.device().is_cuda() || !cudnn_dtype(input.dtype())) return false;
  auto same = [&](const Tensor& t) { return t.dtype() == input.dtype() && t.device() == input.device(); };
  for (const Tensor& w : weights)
    if (!w.defined() || !same(w)) return false;
  if ((hx.defined() && !same(hx)) || (cx.defined() && !same(cx))) return false;
  // Empty sizes are left to the composition (cuDNN rejects them); 32-bit descriptors bound the rest.
  const int64_t T = input.size(0), N = input.size(1), width = s.directions() * std::max(s.out_size(), s.hidden_size);
  if (T <= 0 || N <= 0 || s.input_size <= 0) return false;
  const int64_t layers = s.num_layers * s.directions();
  return fits_int32(input.numel()) && fits_int32(T * N * width) && fits_int32(layers * N * s.hidden_size) &&
         fits_int32(s.gates() * s.hidden_size * std::max(s.input_size, width));
}

std::tuple<Tensor, Tensor, Tensor> _cudnn_rnn(const Tensor& input, const TensorList& weights, const Tensor& hx,
                                              const Tensor& cx, const RnnShape& shape) {
  check_call(shape, input, weights, hx, cx);
  const int64_t T = input.size(0), N = input.size(1), layers = shape.num_layers * shape.directions();
  TensorList in{input.contiguous(), hx.contiguous(), cx.defined() ? cx.contiguous() : Tensor()};
  for (const Tensor& w : weights) in.push_back(w.contiguous());
  const bool training = detail::should_record(in);
  cuda::RnnSpaces spaces;
  {
    cuda::DeviceGuard guard(input.device());
    spaces = cuda::rnn_spaces(shape, input.dtype(), T, N, training);
  }
  const ScalarType t = input.dtype();
  std::vector<OutSpec> specs{{DimVector{T, N, shape.directions() * shape.out_size()}, t},
                             {DimVector{layers, N, shape.out_size()}, t}};
  if (is_lstm(shape)) specs.push_back({DimVector{layers, N, shape.hidden_size}, t});
  specs.push_back({DimVector{spaces.reserve_bytes}, kUInt8});
  specs.push_back({DimVector{spaces.weight_bytes}, kUInt8});
  TensorList out = run_op(CudnnRnn(shape, training), in, specs);
  return {out[0], out[1], is_lstm(shape) ? out[2] : Tensor()};
}

}  // namespace ember
