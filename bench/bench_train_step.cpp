// One Fashion-MNIST training step (forward, F::cross_entropy, zero_grad, backward, AdamW step
// with lr 2e-3, weight decay 1e-4) for the canonical models, and each CNN layer's forward and
// forward + backward at the shape it sees in that step. bench/train_step_torch.py times the same
// models, steps and layers in PyTorch.
//
// Canonical workloads (names looked up by the comparison harness; thread count from
// OMP_NUM_THREADS):
//   step/mlp_b128  MLP Flatten, Linear(784, 512), ReLU, Linear(512, 256), ReLU, Linear(256, 10)
//                  on x = randn(128, 1, 28, 28), y = randint(0, 10, {128}), training mode.
//   step/cnn_b64   the trainer's CNN of examples/fashion_mnist.cpp (conv(1->32, 3x3, pad 1),
//                  BatchNorm2d(32), ReLU, MaxPool2d(2), conv(32->64, 3x3, pad 1),
//                  BatchNorm2d(64), ReLU, MaxPool2d(2), Flatten, Dropout(0.25),
//                  Linear(3136, 128), ReLU, Dropout(0.25), Linear(128, 10)) on
//                  x = randn(64, 1, 28, 28), y = randint(0, 10, {64}), training mode.
//   Each iteration: loss = F::cross_entropy(model(x), y); zero_grad (set_to_none);
//   loss.backward(); AdamW step (lr 2e-3, weight_decay 1e-4, betas (0.9, 0.999), eps 1e-8).
// The BM_TrainStep/threads:1/2 variants run the same steps with fixed iteration counts (the
// same in train_step_torch.py) and time the parts.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <ember/core/ops/conv.h>
#include <ember/core/ops/dropout.h>
#include <ember/core/ops/loss.h>
#include <ember/core/ops/normalization.h>
#include <ember/core/ops/pooling.h>
#include <ember/ember.h>
#include <ember/nn/functional/linear.h>
#include <ember/nn/functional/loss.h>
#include <ember/nn/modules/activation.h>
#include <ember/nn/modules/batchnorm.h>
#include <ember/nn/modules/container.h>
#include <ember/nn/modules/conv.h>
#include <ember/nn/modules/dropout.h>
#include <ember/nn/modules/flatten.h>
#include <ember/nn/modules/linear.h>
#include <ember/nn/modules/pooling.h>
#include <ember/optim/adamw.h>

namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;
using ember::Tensor;

constexpr int64_t kBatchCnn = 64;   // step/cnn_b64 and the layers below
constexpr int64_t kBatchMlp = 128;  // step/mlp_b128
constexpr int64_t kBatch = kBatchCnn;
constexpr int kRepetitions = 5;  // bench/README.md quotes the best repetition

// Best of the repetitions: on a shared machine the fastest run is the one least disturbed.
// Statistics apply to every column alike, so the best time is the "min" row and the best
// samples/s rate the "max" row.
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

// Fixed iterations per repetition (train_step_torch.py uses the same), wall time.
void configure(benchmark::internal::Benchmark* b, int64_t iterations) {
  b->Iterations(iterations)->Repetitions(kRepetitions)->ComputeStatistics("min", min_of);
  b->ComputeStatistics("max", max_of);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

// ---- whole training step ----------------------------------------------------------------

// The trainer's CNN, module for module: conv-bn-relu-pool twice, then the classifier.
struct CnnImpl : nn::Module {
  CnnImpl()
      : features(register_module(
            "features",
            nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32), nn::ReLU(),
                           nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                           nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2))))),
        classifier(register_module(
            "classifier", nn::Sequential(nn::Flatten(), nn::Dropout(0.25), nn::Linear(64 * 7 * 7, 128), nn::ReLU(),
                                         nn::Dropout(0.25), nn::Linear(128, 10)))) {}
  Tensor forward(const Tensor& x) { return classifier->forward(features->forward(x)); }
  nn::Sequential features, classifier;
};
EMBER_MODULE(Cnn);

// Model 0 is the CNN, 1 the MLP 784-512-256-10 (the label says which).
std::pair<std::shared_ptr<nn::Module>, std::function<Tensor(const Tensor&)>> make_model(int64_t kind) {
  if (kind == 1) {
    nn::Sequential mlp(nn::Flatten(), nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 256), nn::ReLU(),
                       nn::Linear(256, 10));
    return {mlp.ptr(), [mlp](const Tensor& x) mutable { return mlp->forward(x); }};
  }
  Cnn cnn;
  return {cnn.ptr(), [cnn](const Tensor& x) mutable { return cnn->forward(x); }};
}

// Counters: samples/s, and the step's parts (forward + loss, backward, zero_grad + AdamW step)
// in ms per iteration, timed inside the loop.
void BM_TrainStep(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  ember::manual_seed(0);
  auto [module, forward] = make_model(state.range(0));
  module->train();
  ember::optim::AdamW optimizer(module->parameters(), ember::optim::AdamWOptions(2e-3).weight_decay(1e-4));
  const int64_t batch = state.range(0) == 0 ? kBatchCnn : kBatchMlp;
  Tensor x = ember::randn({batch, 1, 28, 28});
  Tensor y = ember::randint(0, 10, {batch});
  using clock = std::chrono::steady_clock;
  double t_fwd = 0, t_bwd = 0, t_opt = 0;
  for (auto _ : state) {
    auto t0 = clock::now();
    Tensor loss = F::cross_entropy(forward(x), y);
    auto t1 = clock::now();
    optimizer.zero_grad();
    loss.backward();
    auto t2 = clock::now();
    optimizer.step();
    auto t3 = clock::now();
    t_fwd += std::chrono::duration<double, std::milli>(t1 - t0).count();
    t_bwd += std::chrono::duration<double, std::milli>(t2 - t1).count();
    t_opt += std::chrono::duration<double, std::milli>(t3 - t2).count();
  }
  state.counters["samples"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["fwd_ms"] = benchmark::Counter(t_fwd, benchmark::Counter::kAvgIterations);
  state.counters["bwd_ms"] = benchmark::Counter(t_bwd, benchmark::Counter::kAvgIterations);
  state.counters["opt_ms"] = benchmark::Counter(t_opt, benchmark::Counter::kAvgIterations);
  state.SetLabel(state.range(0) == 0 ? "cnn" : "mlp");
}
BENCHMARK(BM_TrainStep)->ArgNames({"model", "threads"})->Args({0, 1})->Args({0, 2})->Apply([](auto* b) { configure(b, 10); });
BENCHMARK(BM_TrainStep)->ArgNames({"model", "threads"})->Args({1, 1})->Args({1, 2})->Apply([](auto* b) { configure(b, 200); });

// The canonical steps (see the top of the file): thread count from OMP_NUM_THREADS.
void BM_CanonicalStep(benchmark::State& state, int64_t kind) {
  ember::manual_seed(0);
  auto [module, forward] = make_model(kind);
  module->train();
  ember::optim::AdamW optimizer(module->parameters(), ember::optim::AdamWOptions(2e-3).weight_decay(1e-4));
  const int64_t batch = kind == 0 ? kBatchCnn : kBatchMlp;
  Tensor x = ember::randn({batch, 1, 28, 28});
  Tensor y = ember::randint(0, 10, {batch});
  for (auto _ : state) {
    Tensor loss = F::cross_entropy(forward(x), y);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  state.counters["samples"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}

// ---- the CNN's layers at the step's shapes --------------------------------------------------

// One layer: the leaves that need a gradient in training, a forward that records the graph,
// and the gradient flowing into its output (undefined for the scalar loss).
struct Layer {
  std::vector<Tensor> leaves;
  std::function<Tensor()> forward;
  Tensor grad_out;
};

Tensor leaf(std::vector<int64_t> shape) { return ember::randn(shape).requires_grad_(true); }

// The layers in the order of the step, with their iteration counts per repetition (the same
// table is in train_step_torch.py).
struct LayerCase {
  const char* name;
  int64_t iterations;
};
constexpr LayerCase kLayers[] = {{"conv1", 20},   {"bn1", 20},   {"relu1", 50}, {"pool1", 20},
                                 {"conv2", 10},   {"bn2", 50},   {"relu2", 50}, {"pool2", 50},
                                 {"dropout", 100}, {"fc1", 50},  {"fc2", 500},  {"cross_entropy", 500}};

Layer make_layer(int64_t which) {
  Layer l;
  // Inputs that come from a previous layer need a gradient; conv1's input is the data.
  auto bn = [&l](int64_t c, int64_t hw) {
    Tensor x = leaf({kBatch, c, hw, hw}), w = leaf({c}), b = leaf({c});
    Tensor rm = ember::zeros({c}), rv = ember::ones({c});
    l.leaves = {x, w, b};
    l.forward = [=] { return ember::batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5); };
  };
  auto relu = [&l](int64_t c, int64_t hw) {
    Tensor x = leaf({kBatch, c, hw, hw});
    l.leaves = {x};
    l.forward = [=] { return ember::relu(x); };
  };
  auto pool = [&l](int64_t c, int64_t hw) {
    Tensor x = leaf({kBatch, c, hw, hw});
    l.leaves = {x};
    l.forward = [=] { return ember::max_pool2d(x, 2); };
  };
  auto linear = [&l](int64_t in, int64_t out) {
    Tensor x = leaf({kBatch, in}), w = leaf({out, in}), b = leaf({out});
    l.leaves = {x, w, b};
    l.forward = [=] { return F::linear(x, w, b); };
  };
  switch (which) {
    case 0: {
      Tensor x = ember::randn({kBatch, 1, 28, 28}), w = leaf({32, 1, 3, 3}), b = leaf({32});
      l.leaves = {w, b};
      l.forward = [=] { return ember::conv2d(x, w, b, 1, 1); };
      break;
    }
    case 1: bn(32, 28); break;
    case 2: relu(32, 28); break;
    case 3: pool(32, 28); break;
    case 4: {
      Tensor x = leaf({kBatch, 32, 14, 14}), w = leaf({64, 32, 3, 3}), b = leaf({64});
      l.leaves = {x, w, b};
      l.forward = [=] { return ember::conv2d(x, w, b, 1, 1); };
      break;
    }
    case 5: bn(64, 14); break;
    case 6: relu(64, 14); break;
    case 7: pool(64, 14); break;
    case 8: {
      Tensor x = leaf({kBatch, 64 * 7 * 7});
      l.leaves = {x};
      l.forward = [=] { return ember::dropout(x, 0.25, true); };
      break;
    }
    case 9: linear(64 * 7 * 7, 128); break;
    case 10: linear(128, 10); break;
    default: {
      Tensor x = leaf({kBatch, 10}), t = ember::randint(0, 10, {kBatch});
      l.leaves = {x};
      l.forward = [=] { return F::cross_entropy(x, t); };
      break;
    }
  }
  Tensor y = l.forward();
  if (y.dim() > 0) l.grad_out = ember::randn(y.sizes());
  return l;
}

// Forward with the graph recorded, as in training (the graph is freed with the output).
void BM_LayerForward(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  Layer l = make_layer(state.range(0));
  for (auto _ : state) {
    Tensor y = l.forward();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetLabel(kLayers[state.range(0)].name);
}

// Forward, then backward into every leaf (gradients reset to none each time, as zero_grad).
void BM_LayerForwardBackward(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(1)));
  Layer l = make_layer(state.range(0));
  for (auto _ : state) {
    Tensor y = l.forward();
    if (l.grad_out.defined())
      y.backward(l.grad_out);
    else
      y.backward();
    benchmark::DoNotOptimize(l.leaves[0].grad().data_ptr());
    for (Tensor& t : l.leaves) t.mutable_grad().reset();
  }
  state.SetLabel(kLayers[state.range(0)].name);
}

void register_layers() {
  for (int64_t i = 0; i < static_cast<int64_t>(std::size(kLayers)); ++i)
    for (int64_t t : {1, 2}) {
      for (auto fn : {BM_LayerForward, BM_LayerForwardBackward}) {
        std::string name = fn == BM_LayerForward ? "BM_LayerForward/" : "BM_LayerForwardBackward/";
        auto* b = benchmark::RegisterBenchmark((name + kLayers[i].name).c_str(), fn);
        b->ArgNames({"layer", "threads"})->Args({i, t});
        configure(b, kLayers[i].iterations);
      }
    }
}

// zero_grad + AdamW step alone over the CNN's parameters, gradients filled once.
void BM_AdamWStep(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  Cnn cnn;
  ember::optim::AdamW optimizer(cnn->parameters(), ember::optim::AdamWOptions(2e-3).weight_decay(1e-4));
  for (auto& p : cnn->parameters()) p.mutable_grad() = ember::randn(p.sizes());
  for (auto _ : state) optimizer.step();
}
BENCHMARK(BM_AdamWStep)->ArgName("threads")->Arg(1)->Arg(2)->Apply([](auto* b) { configure(b, 100); });

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("step/mlp_b128", BM_CanonicalStep, int64_t{1})->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("step/cnn_b64", BM_CanonicalStep, int64_t{0})->Unit(benchmark::kMillisecond)->UseRealTime();
  register_layers();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
