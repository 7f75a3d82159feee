// cuDNN's RNN (_cudnn_rnn, core/ops/cudnn_rnn.cpp) against the composition of public ops that
// nn/modules/rnn.cpp falls back to: the same CUDA module, inputs and loss run once with
// ember::backends::cudnn::enabled (grad_fn CudnnRnnBackward0) and once without (the composed
// path), and the outputs, final states and every gradient (input, initial states, each
// parameter) must agree: RNN tanh / relu, LSTM with and without proj_size, GRU; 1-2 layers,
// bidirectional, batch_first, with and without initial states or bias, odd sizes; float32
// (TF32 off) and float64 tightly, float16 loosely. Then the op's contract: which calls take
// it, PyTorch's double-backward error, a retained graph's second backward, eval-mode
// backward, a loss through h_n alone. Skipped without a GPU (tests/cuda/main.cpp).
#include <string>

#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Sets a backends flag for a scope and puts back what it was.
struct FlagGuard {
  backends::Flag& flag;
  bool before;
  FlagGuard(backends::Flag& f, bool value) : flag(f), before(f) { flag = value; }
  ~FlagGuard() { flag = before; }
};

constexpr size_t kNoState = static_cast<size_t>(-1);

Tol tol_for(ScalarType t) {
  switch (t) {
    case kHalf: return {5e-2, 5e-2};     // the composition rounds every op to half, cuDNN only its results
    case kDouble: return {1e-9, 1e-9};
    default: return {5e-5, 5e-4};        // float32 without TF32: summation orders differ
  }
}

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("(leaf)"); }

struct RunResult {
  TensorList outs, input_grads, param_grads;
};

/// Runs `run` on CUDA leaves made from `inputs` with cuDNN on or off and backpropagates fixed
/// random weights through every result. `state` is the index of a result that comes straight
/// from the op (h_n), whose grad_fn names the path taken (kNoState: none does, unbatched).
template <class Module, class Run>
RunResult run_once(Module& m, const TensorList& inputs, ScalarType dtype, bool cudnn, size_t state, Run run) {
  FlagGuard on(backends::cudnn::enabled, cudnn);
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  m.zero_grad();
  TensorList leaves;
  for (const Tensor& x : inputs) leaves.push_back(x.to(cuda_device(), dtype).detach().requires_grad_(true));
  RunResult r;
  r.outs = run(m, leaves);
  if (state < r.outs.size()) {
    const std::string fn = grad_fn_name(r.outs[state]);
    if (cudnn)
      CHECK(fn == "CudnnRnnBackward0");
    else
      CHECK(fn != "CudnnRnnBackward0");
  }
  Tensor loss;
  for (size_t i = 0; i < r.outs.size(); ++i) {
    manual_seed(100 + i);
    Tensor w = rand(r.outs[i].sizes(), kDouble).to(cuda_device(), dtype);
    Tensor term = (r.outs[i] * w).sum();
    loss = loss.defined() ? loss + term : term;
  }
  loss.backward();
  for (const Tensor& l : leaves) r.input_grads.push_back(l.grad());
  for (const Tensor& p : m.parameters()) r.param_grads.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return r;
}

/// The module in `dtype` on the GPU gives the same results and gradients through cuDNN as
/// through the composition.
template <class Holder, class Run>
void check_cudnn_matches_composition(Holder holder, const TensorList& inputs, ScalarType dtype, size_t state, Run run) {
  holder->to(cuda_device(), dtype);
  auto& m = *holder;
  RunResult fused = run_once(m, inputs, dtype, true, state, run);
  RunResult composed = run_once(m, inputs, dtype, false, state, run);
  const Tol tol = tol_for(dtype);
  for (size_t i = 0; i < fused.outs.size(); ++i)
    check_same(fused.outs[i], composed.outs[i], tol, "result " + std::to_string(i));
  for (size_t i = 0; i < inputs.size(); ++i)
    check_same(fused.input_grads[i], composed.input_grads[i], tol, "grad of input " + std::to_string(i));
  auto names = m.named_parameters();
  size_t i = 0;
  for (const auto& p : names) {
    check_same(fused.param_grads[i], composed.param_grads[i], tol, "grad of " + p.key());
    ++i;
  }
}

TensorList rnn_run(nn::RNNImpl& m, const TensorList& x) {
  auto [out, h] = x.size() > 1 ? m.forward(x[0], x[1]) : m.forward(x[0]);
  return {out, h};
}
TensorList gru_run(nn::GRUImpl& m, const TensorList& x) {
  auto [out, h] = x.size() > 1 ? m.forward(x[0], x[1]) : m.forward(x[0]);
  return {out, h};
}
TensorList lstm_run(nn::LSTMImpl& m, const TensorList& x) {
  auto [out, state] = x.size() > 1 ? m.forward(x[0], std::make_tuple(x[1], x[2])) : m.forward(x[0]);
  return {out, std::get<0>(state), std::get<1>(state)};
}

Tensor in(IntArrayRef shape, ScalarType t) { return make_input(shape, t, -1, 1); }

}  // namespace

TEST_CASE("cudnn rnn: RNN tanh and relu equal the composition (layers, directions, batch_first, states)") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    manual_seed(1);
    check_cudnn_matches_composition(nn::RNN(nn::RNNOptions(5, 7).num_layers(2).bidirectional(true)),
                                    {in({9, 3, 5}, t), in({4, 3, 7}, t)}, t, 1, rnn_run);
    manual_seed(2);
    check_cudnn_matches_composition(nn::RNN(nn::RNNOptions(5, 7).nonlinearity(kReLU).batch_first(true)),
                                    {in({3, 9, 5}, t)}, t, 1, rnn_run);
    manual_seed(3);
    check_cudnn_matches_composition(nn::RNN(nn::RNNOptions(3, 4).nonlinearity(kReLU).num_layers(2).bias(false)),
                                    {in({6, 1, 3}, t), in({2, 1, 4}, t)}, t, 1, rnn_run);
  }
}

TEST_CASE("cudnn rnn: LSTM equals the composition (2 layers bidirectional, states, proj_size, no bias, unbatched)") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    manual_seed(4);
    check_cudnn_matches_composition(nn::LSTM(nn::LSTMOptions(5, 7).num_layers(2).bidirectional(true)),
                                    {in({9, 3, 5}, t), in({4, 3, 7}, t), in({4, 3, 7}, t)}, t, 1, lstm_run);
    manual_seed(5);
    check_cudnn_matches_composition(
        nn::LSTM(nn::LSTMOptions(5, 7).proj_size(3).num_layers(2).bidirectional(true).batch_first(true)),
        {in({3, 9, 5}, t), in({4, 3, 3}, t), in({4, 3, 7}, t)}, t, 1, lstm_run);
    manual_seed(6);
    check_cudnn_matches_composition(nn::LSTM(nn::LSTMOptions(5, 7).proj_size(2).bias(false)), {in({8, 2, 5}, t)},
                                    t, 1, lstm_run);
    manual_seed(7);
    check_cudnn_matches_composition(nn::LSTM(nn::LSTMOptions(5, 7)), {in({8, 3, 5}, t)}, t, 1, lstm_run);
    manual_seed(18);  // unbatched: h_n is squeezed, so no grad_fn names the path
    check_cudnn_matches_composition(nn::LSTM(nn::LSTMOptions(5, 7).num_layers(2)), {in({8, 5}, t)}, t, kNoState,
                                    lstm_run);
  }
}

TEST_CASE("cudnn rnn: GRU equals the composition (2 layers bidirectional, batch_first, no bias)") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    manual_seed(8);
    check_cudnn_matches_composition(nn::GRU(nn::GRUOptions(5, 7).num_layers(2).bidirectional(true)),
                                    {in({9, 3, 5}, t), in({4, 3, 7}, t)}, t, 1, gru_run);
    manual_seed(9);
    check_cudnn_matches_composition(nn::GRU(nn::GRUOptions(5, 7).bias(false).batch_first(true)), {in({3, 9, 5}, t)},
                                    t, 1, gru_run);
  }
}

TEST_CASE("cudnn rnn: float16 agrees with the composition loosely") {
  manual_seed(10);
  check_cudnn_matches_composition(nn::LSTM(nn::LSTMOptions(8, 16).num_layers(2).bidirectional(true)),
                                  {in({6, 4, 8}, kHalf), in({4, 4, 16}, kHalf), in({4, 4, 16}, kHalf)}, kHalf, 1,
                                  lstm_run);
  manual_seed(11);
  check_cudnn_matches_composition(nn::GRU(nn::GRUOptions(8, 16).batch_first(true)), {in({4, 6, 8}, kHalf)}, kHalf, 1,
                                  gru_run);
  manual_seed(12);
  check_cudnn_matches_composition(nn::RNN(nn::RNNOptions(8, 16)), {in({6, 4, 8}, kHalf)}, kHalf, 1, rnn_run);
}

TEST_CASE("cudnn rnn: which calls take cuDNN") {
  manual_seed(13);
  auto path = [](nn::LSTM& lstm, const Tensor& x) { return grad_fn_name(std::get<0>(std::get<1>(lstm->forward(x)))); };
  Tensor x = in({5, 2, 4}, kFloat).to(cuda_device()).requires_grad_(true);
  nn::LSTM lstm(nn::LSTMOptions(4, 6).num_layers(2).dropout(0.5));
  lstm->to(cuda_device());
  // Training with dropout between layers: the composition (ember's generator draws the masks).
  CHECK(path(lstm, x) != "CudnnRnnBackward0");
  lstm->eval();  // no dropout in eval: cuDNN, and its backward still works (training mode is per call)
  CHECK(path(lstm, x) == "CudnnRnnBackward0");
  std::get<0>(lstm->forward(x)).sum().backward();
  CHECK(x.grad().defined());
  {
    FlagGuard off(backends::cudnn::enabled, false);
    CHECK(path(lstm, x) != "CudnnRnnBackward0");
  }
  // bfloat16 is not cuDNN's (PyTorch's cudnn_is_acceptable): composed.
  nn::GRU gru(nn::GRUOptions(4, 6));
  gru->to(cuda_device(), kBFloat16);
  Tensor xb = in({5, 2, 4}, kBFloat16).to(cuda_device()).requires_grad_(true);
  CHECK(grad_fn_name(std::get<1>(gru->forward(xb))) != "CudnnRnnBackward0");
  // The cells stay compositions.
  nn::LSTMCell cell(4, 6);
  cell->to(cuda_device());
  CHECK(grad_fn_name(std::get<0>(cell->forward(x.select(0, 0)))) != "CudnnRnnBackward0");
}

TEST_CASE("cudnn rnn: inference (no grad) gives the training forward's outputs") {
  manual_seed(14);
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  nn::GRU gru(nn::GRUOptions(4, 6).num_layers(2).bidirectional(true));
  gru->to(cuda_device());
  Tensor x = in({5, 3, 4}, kFloat).to(cuda_device());
  auto [y_train, h_train] = gru->forward(x);
  CHECK(grad_fn_name(h_train) == "CudnnRnnBackward0");
  NoGradGuard no_grad;
  auto [y_inf, h_inf] = gru->forward(x);
  check_same(y_inf, y_train.detach(), Tol{1e-6, 1e-5}, "output");
  check_same(h_inf, h_train.detach(), Tol{1e-6, 1e-5}, "h_n");
}

TEST_CASE("cudnn rnn: a loss through h_n alone, and a retained graph's second backward") {
  manual_seed(15);
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  nn::LSTM lstm(nn::LSTMOptions(4, 6).num_layers(2));
  lstm->to(cuda_device());
  Tensor x = in({5, 3, 4}, kFloat).to(cuda_device()).requires_grad_(true);
  auto grads_of = [&](bool cudnn) {
    FlagGuard on(backends::cudnn::enabled, cudnn);
    x.mutable_grad() = Tensor();
    lstm->zero_grad();
    auto [y, state] = lstm->forward(x);
    Tensor loss = std::get<0>(state).pow(2).sum();  // no gradient reaches y or c_n
    loss.backward({}, true);
    Tensor first = x.grad().clone(), first_w = lstm->parameters()[1].grad().clone();
    x.mutable_grad() = Tensor();
    lstm->zero_grad();
    loss.backward();  // the reserve was not consumed by the first backward
    check_same(x.grad(), first, Tol{0, 0}, "second backward, input");
    check_same(lstm->parameters()[1].grad(), first_w, Tol{0, 0}, "second backward, weight_hh_l0");
    return TensorList{first, first_w};
  };
  TensorList fused = grads_of(true), composed = grads_of(false);
  check_same(fused[0], composed[0], tol_for(kFloat), "grad of input");
  check_same(fused[1], composed[1], tol_for(kFloat), "grad of weight_hh_l0");
}

TEST_CASE("cudnn rnn: double backward raises PyTorch's error; the composition has one") {
  manual_seed(16);
  nn::GRU gru(nn::GRUOptions(3, 4));
  gru->to(cuda_device());
  Tensor x = in({4, 2, 3}, kFloat).to(cuda_device()).requires_grad_(true);
  auto [y, h] = gru->forward(x);
  REQUIRE(grad_fn_name(h) == "CudnnRnnBackward0");
  Tensor gx = autograd::grad({y.sum()}, {x}, {}, true, true)[0];
  CHECK_THROWS_WITH_AS(gx.sum().backward(),
                       doctest::Contains("the derivative for '_cudnn_rnn_backward' is not implemented. Double "
                                         "backwards is not supported for CuDNN RNNs"),
                       ember::Error);
  FlagGuard off(backends::cudnn::enabled, false);
  auto [y2, h2] = gru->forward(x);
  Tensor gx2 = autograd::grad({y2.sum()}, {x}, {}, true, true)[0];
  CHECK_NOTHROW(gx2.sum().backward());
}

TEST_CASE("cudnn rnn: weights changed in place after forward are caught in backward") {
  manual_seed(17);
  nn::RNN rnn(nn::RNNOptions(3, 4));
  rnn->to(cuda_device());
  Tensor x = in({4, 2, 3}, kFloat).to(cuda_device());
  auto [y, h] = rnn->forward(x);
  REQUIRE(grad_fn_name(h) == "CudnnRnnBackward0");
  {
    NoGradGuard no_grad;
    rnn->parameters()[0].add_(1.0);
  }
  CHECK_THROWS_WITH_AS(y.sum().backward(),
                       doctest::Contains("one of the variables needed for gradient computation has been modified"),
                       ember::Error);
}

TEST_CASE("cudnn rnn: a frozen stack (no weight needs a gradient) still gives the input's and h0's") {
  manual_seed(19);
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  nn::GRU gru(nn::GRUOptions(4, 6).num_layers(2).bidirectional(true));
  gru->to(cuda_device());
  for (Tensor& p : gru->parameters()) p.requires_grad_(false);
  const Tensor x_values = in({5, 3, 4}, kFloat).to(cuda_device()), h0_values = in({4, 3, 6}, kFloat).to(cuda_device());
  auto grads_of = [&](bool cudnn) {
    FlagGuard on(backends::cudnn::enabled, cudnn);
    Tensor x = x_values.clone().requires_grad_(true), h0 = h0_values.clone().requires_grad_(true);
    auto [y, h] = gru->forward(x, h0);
    CHECK((grad_fn_name(h) == "CudnnRnnBackward0") == cudnn);
    (y.sum() + h.pow(2).sum()).backward();
    return TensorList{x.grad(), h0.grad()};
  };
  TensorList fused = grads_of(true), composed = grads_of(false);
  check_same(fused[0], composed[0], tol_for(kFloat), "grad of input");
  check_same(fused[1], composed[1], tol_for(kFloat), "grad of h0");
  for (const Tensor& p : gru->parameters()) CHECK_FALSE(p.grad().defined());
}
