// One training step of the character-level GPT of examples/char_gpt.cpp at its default size
// (4 layers, 4 heads, n_embd 128, block 64, vocabulary 96; batch 32: 2048 tokens): forward,
// cross_entropy over every position, zero_grad, backward, clip_grad_norm_(1.0), AdamW step
// (lr 1e-3, betas (0.9, 0.95), weight decay 0.1 on matrices and embeddings, 0 on biases and
// LayerNorms). bench/torch_workloads.py times the same step with examples/char_gpt.py's model.
//
// Canonical workload (thread count from OMP_NUM_THREADS): step/char_gpt.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include <ember/ember.h>

#include "../examples/char_gpt_model.h"

namespace {

namespace F = ember::nn::functional;
using ember::Tensor;

constexpr int64_t kVocab = 96, kBatch = 32;

void BM_CharGptStep(benchmark::State& state) {
  ember::manual_seed(0);
  char_gpt::Config config;
  config.vocab_size = kVocab;
  char_gpt::Gpt model(config);
  model->train();
  std::vector<Tensor> decay, no_decay;
  for (auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = ember::optim::AdamWOptions(1e-3).betas({0.9, 0.95}).weight_decay(0.1);
  std::vector<ember::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<ember::optim::AdamWOptions>(options));
  groups.emplace_back(no_decay, std::make_unique<ember::optim::AdamWOptions>(ember::optim::AdamWOptions(options).weight_decay(0.0)));
  ember::optim::AdamW optimizer(std::move(groups), options);
  Tensor x = ember::randint(0, kVocab, {kBatch, config.block_size});
  Tensor y = ember::randint(0, kVocab, {kBatch, config.block_size});
  for (auto _ : state) {
    Tensor logits = model->forward(x);
    Tensor loss = F::cross_entropy(logits.view({-1, kVocab}), y.view({-1}));
    optimizer.zero_grad();
    loss.backward();
    ember::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
  }
  state.counters["tokens"] = benchmark::Counter(static_cast<double>(kBatch * config.block_size),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("step/char_gpt", BM_CharGptStep)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
