// LSTM training step: nn::LSTM(256, 256, num_layers=2) on seq 64 x batch 32 float32 input,
// forward and backward of (output * g).sum() (g = randn like the output) into the weights and
// the input. bench/rnn_pytorch.py runs the same workload in PyTorch.
//
//   lstm/h256_l2_t64_b32/fwd     forward only, under NoGradGuard
//   lstm/h256_l2_t64_b32/fwdbwd  forward + backward, gradients reset to none each iteration
// items_per_second counts time steps x batch (tokens) per second.
#include <benchmark/benchmark.h>

#include <ember/ember.h>

namespace {

using ember::Tensor;

constexpr int64_t kHidden = 256, kLayers = 2, kSeq = 64, kBatch = 32;

ember::nn::LSTM make_lstm() {
  ember::manual_seed(0);
  return ember::nn::LSTM(ember::nn::LSTMOptions(kHidden, kHidden).num_layers(kLayers));
}

void BM_LstmForward(benchmark::State& state) {
  auto lstm = make_lstm();
  Tensor x = ember::randn({kSeq, kBatch, kHidden});
  ember::NoGradGuard no_grad;
  for (auto _ : state) {
    Tensor y = std::get<0>(lstm->forward(x));
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * kSeq * kBatch);
}

void BM_LstmForwardBackward(benchmark::State& state) {
  auto lstm = make_lstm();
  Tensor x = ember::randn({kSeq, kBatch, kHidden}).requires_grad_(true);
  Tensor g = ember::randn({kSeq, kBatch, kHidden});
  for (auto _ : state) {
    Tensor y = std::get<0>(lstm->forward(x));
    y.backward(g);
    lstm->zero_grad();
    x.mutable_grad().reset();
  }
  state.SetItemsProcessed(state.iterations() * kSeq * kBatch);
}

}  // namespace

BENCHMARK(BM_LstmForward)->Name("lstm/h256_l2_t64_b32/fwd")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LstmForwardBackward)->Name("lstm/h256_l2_t64_b32/fwdbwd")->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
