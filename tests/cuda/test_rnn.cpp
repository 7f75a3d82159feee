// CUDA parity of the recurrent layers and cells (nn/modules/rnn.cpp): the same module cloned
// onto the GPU gives the CPU's outputs, final states and gradients (input, states and every
// parameter) for RNN tanh/relu, LSTM (2 layers, bidirectional, proj_size), GRU and the cells,
// in float32 and float64, batch_first and unbatched. On the GPU the layers run on cuDNN
// (tests/cuda/test_rnn_cudnn.cpp compares that with their composition) and the cells compose
// public ops, so this checks both against the CPU's composition.
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

Tol rnn_tol(ScalarType t) {
  // Sequences of matmuls and tanh/sigmoid: float32 rounding differs between cuBLAS and the CPU GEMM.
  if (t == kFloat) return {2e-5, 2e-4};
  return default_tol(t);
}

/// Runs `run(module, inputs)` (returning a TensorList of results) on the CPU module and on its
/// CUDA clone, backpropagates the same weights through every result, and compares results,
/// the inputs' gradients and every parameter's gradient.
template <class Holder, class Run>
void check_module_parity(Holder cpu, const TensorList& inputs, ScalarType dtype, Run run) {
  // The layers run on cuDNN on the GPU, whose float32 may use TF32 by default (as PyTorch's);
  // this compares full float32 with the CPU.
  struct NoTF32 {
    bool before = backends::cudnn::allow_tf32;
    NoTF32() { backends::cudnn::allow_tf32 = false; }
    ~NoTF32() { backends::cudnn::allow_tf32 = before; }
  } no_tf32;
  cpu->to(dtype);
  auto gpu = std::dynamic_pointer_cast<typename Holder::ContainedType>(cpu->clone(cuda_device()));
  REQUIRE(gpu != nullptr);
  auto go = [&](auto& module, Device d, TensorList& leaves) {
    leaves.clear();
    for (const Tensor& x : inputs) leaves.push_back(x.to(d, dtype).detach().requires_grad_(true));
    TensorList outs = run(module, leaves);
    Tensor loss;
    for (size_t i = 0; i < outs.size(); ++i) {
      manual_seed(100 + i);
      Tensor w = rand(outs[i].sizes(), TensorOptions().dtype(dtype)).to(d);
      Tensor term = (outs[i] * w).sum();
      loss = loss.defined() ? loss + term : term;
    }
    loss.backward();
    return outs;
  };
  TensorList cpu_leaves, gpu_leaves;
  TensorList cpu_out = go(*cpu, kCPU, cpu_leaves);
  TensorList gpu_out = go(*gpu, cuda_device(), gpu_leaves);
  Tol tol = rnn_tol(dtype);
  for (size_t i = 0; i < cpu_out.size(); ++i) check_same(gpu_out[i], cpu_out[i], tol, "result " + std::to_string(i));
  for (size_t i = 0; i < inputs.size(); ++i)
    check_same(gpu_leaves[i].grad(), cpu_leaves[i].grad(), tol, "grad of input " + std::to_string(i));
  auto gpu_params = gpu->named_parameters();
  for (const auto& p : cpu->named_parameters())
    check_same(gpu_params[p.key()].grad(), p.value().grad(), tol, "grad of " + p.key());
}

const std::vector<ScalarType> kRnnTypes = {kFloat, kDouble};

}  // namespace

TEST_CASE("cuda rnn: RNN tanh (2 layers, bidirectional) and relu (batch_first)") {
  for (ScalarType t : kRnnTypes) {
    INFO("dtype " << t);
    manual_seed(1);
    check_module_parity(nn::RNN(nn::RNNOptions(5, 6).num_layers(2).bidirectional(true)),
                        {make_input({7, 3, 5}, t, -1, 1), make_input({4, 3, 6}, t, -1, 1)}, t,
                        [](nn::RNNImpl& m, const TensorList& x) {
                          auto [out, h] = m.forward(x[0], x[1]);
                          return TensorList{out, h};
                        });
    check_module_parity(nn::RNN(nn::RNNOptions(5, 6).nonlinearity(kReLU).batch_first(true)),
                        {make_input({3, 7, 5}, t, -1, 1)}, t, [](nn::RNNImpl& m, const TensorList& x) {
                          auto [out, h] = m.forward(x[0]);
                          return TensorList{out, h};
                        });
  }
}

TEST_CASE("cuda rnn: LSTM (2 layers, bidirectional, given states; proj_size; unbatched)") {
  for (ScalarType t : kRnnTypes) {
    INFO("dtype " << t);
    manual_seed(2);
    check_module_parity(nn::LSTM(nn::LSTMOptions(5, 6).num_layers(2).bidirectional(true)),
                        {make_input({7, 3, 5}, t, -1, 1), make_input({4, 3, 6}, t, -1, 1),
                         make_input({4, 3, 6}, t, -1, 1)},
                        t, [](nn::LSTMImpl& m, const TensorList& x) {
                          auto [out, state] = m.forward(x[0], std::make_tuple(x[1], x[2]));
                          return TensorList{out, std::get<0>(state), std::get<1>(state)};
                        });
    check_module_parity(nn::LSTM(nn::LSTMOptions(5, 6).proj_size(3).batch_first(true)),
                        {make_input({3, 7, 5}, t, -1, 1)}, t, [](nn::LSTMImpl& m, const TensorList& x) {
                          auto [out, state] = m.forward(x[0]);
                          return TensorList{out, std::get<0>(state), std::get<1>(state)};
                        });
    check_module_parity(nn::LSTM(nn::LSTMOptions(5, 6)), {make_input({7, 5}, t, -1, 1)}, t,
                        [](nn::LSTMImpl& m, const TensorList& x) {
                          auto [out, state] = m.forward(x[0]);
                          return TensorList{out, std::get<0>(state), std::get<1>(state)};
                        });
  }
}

TEST_CASE("cuda rnn: GRU (2 layers, bidirectional, dropout in eval) and without bias") {
  for (ScalarType t : kRnnTypes) {
    INFO("dtype " << t);
    manual_seed(3);
    nn::GRU gru(nn::GRUOptions(5, 6).num_layers(2).bidirectional(true).dropout(0.3));
    gru->eval();
    check_module_parity(gru, {make_input({7, 3, 5}, t, -1, 1), make_input({4, 3, 6}, t, -1, 1)}, t,
                        [](nn::GRUImpl& m, const TensorList& x) {
                          auto [out, h] = m.forward(x[0], x[1]);
                          return TensorList{out, h};
                        });
    check_module_parity(nn::GRU(nn::GRUOptions(5, 6).bias(false)), {make_input({7, 3, 5}, t, -1, 1)}, t,
                        [](nn::GRUImpl& m, const TensorList& x) {
                          auto [out, h] = m.forward(x[0]);
                          return TensorList{out, h};
                        });
  }
}

TEST_CASE("cuda rnn: RNNCell, LSTMCell, GRUCell") {
  for (ScalarType t : kRnnTypes) {
    INFO("dtype " << t);
    manual_seed(4);
    TensorList in = {make_input({3, 5}, t, -1, 1), make_input({3, 6}, t, -1, 1), make_input({3, 6}, t, -1, 1)};
    check_module_parity(nn::RNNCell(5, 6), {in[0], in[1]}, t,
                        [](nn::RNNCellImpl& m, const TensorList& x) { return TensorList{m.forward(x[0], x[1])}; });
    check_module_parity(nn::LSTMCell(5, 6), in, t, [](nn::LSTMCellImpl& m, const TensorList& x) {
      auto [h, c] = m.forward(x[0], std::make_tuple(x[1], x[2]));
      return TensorList{h, c};
    });
    check_module_parity(nn::GRUCell(5, 6), {in[0], in[1]}, t,
                        [](nn::GRUCellImpl& m, const TensorList& x) { return TensorList{m.forward(x[0], x[1])}; });
  }
}
