// One training step of the Fashion-MNIST trainer's models (examples/fashion_mnist.cpp: the
// MLP and the CNN, built here from the same modules) on the CPU and on CUDA: the same
// weights (copied through the state dict, then module->to(kCUDA)) and the same batch give the
// same loss, the same gradient for every parameter and the same BatchNorm statistics, and
// one AdamW step with the trainer's options (an optimizer made after the move, so it sees
// the CUDA parameters) leaves the same parameters. Also: to(kCUDA) keeps each parameter's
// identity and requires_grad, as PyTorch's Module.to.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

/// A network as the trainer holds it: the module and its forward.
struct Net {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;
};

Net make_mlp() {
  nn::Sequential mlp(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Dropout(0.2), nn::Linear(256, 128),
                     nn::ReLU(), nn::Linear(128, 10));
  return {mlp.ptr(), [mlp](const Tensor& x) mutable { return mlp->forward(x); }};
}

Net make_cnn() {
  nn::Sequential features(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32), nn::ReLU(),
                          nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                          nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::BatchNorm2d(64),
                          nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)));
  nn::Sequential classifier(nn::Flatten(), nn::Dropout(0.25), nn::Linear(64 * 7 * 7, 128), nn::ReLU(),
                            nn::Dropout(0.25), nn::Linear(128, 10));
  // The trainer's Cnn registers these two as "features" and "classifier".
  auto root = std::make_shared<nn::Module>();
  root->register_module("features", features.ptr());
  root->register_module("classifier", classifier.ptr());
  return {root, [features, classifier](const Tensor& x) mutable {
            return classifier->forward(features->forward(x));
          }};
}

/// Training mode, but with dropout off: CPU and CUDA draw different masks, and the step must
/// be comparable. BatchNorm stays in training mode (batch statistics, running averages).
void train_without_dropout(nn::Module& m) {
  m.train();
  for (const auto& child : m.modules())
    if (child->as<nn::DropoutImpl>()) child->eval();
}

/// Every element of `after_cuda` within what AdamW's first step allows: float rounding of the
/// parameter, plus the step's sensitivity to the gradient's own rounding difference. The first
/// step moves a parameter by lr g / (|g| + eps), so a gradient off by d moves it up to
/// 2 lr |d| / (|g| + eps) differently (at most 2 lr, where the sign of a tiny g flips).
void check_first_adamw_step(const Tensor& after_cuda, const Tensor& after_cpu, const Tensor& grad_cuda,
                            const Tensor& grad_cpu, double lr, double eps, const std::string& what) {
  INFO(what);
  std::vector<double> pc = host_values(after_cuda), pp = host_values(after_cpu);
  std::vector<double> gc = host_values(grad_cuda), gp = host_values(grad_cpu);
  REQUIRE(pc.size() == pp.size());
  int bad = 0;
  for (size_t i = 0; i < pc.size(); ++i) {
    const double sensitivity = std::min(2.0, 2 * std::fabs(gc[i] - gp[i]) / (std::fabs(gp[i]) + eps));
    const double bound = 1e-6 + 1e-5 * std::fabs(pp[i]) + lr * sensitivity;
    if (!(std::fabs(pc[i] - pp[i]) <= bound) && bad++ < 5) {
      INFO("element " << i << ": cuda " << pc[i] << ", cpu " << pp[i] << ", grads " << gc[i] << " / "
                      << gp[i]);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

struct StepTols {
  Tol loss, grad, buffer;
};

void check_train_step(const std::function<Net()>& make, const StepTols& tol) {
  // cuDNN may use TF32 for float32 convolutions by default (PyTorch's default too); the
  // comparison is of float32 arithmetic.
  const bool tf32 = backends::cudnn::allow_tf32;
  backends::cudnn::allow_tf32 = false;

  manual_seed(5);
  Net cpu = make();
  Net gpu = make();
  gpu.module->load_state_dict(cpu.module->state_dict());

  // to(kCUDA) converts in place: the same parameter objects, still requiring grad.
  std::vector<Tensor> before = gpu.module->parameters();
  gpu.module->to(kCUDA);
  std::vector<Tensor> after = gpu.module->parameters();
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].is_same(before[i]));
    CHECK(before[i].is_cuda());
    CHECK(after[i].requires_grad());
    CHECK(after[i].is_leaf());
  }
  for (const auto& b : gpu.module->named_buffers()) CHECK(b.value().is_cuda());

  train_without_dropout(*cpu.module);
  train_without_dropout(*gpu.module);
  Tensor x = make_input({24, 1, 28, 28}, kFloat, -1, 2.5);
  manual_seed(11);
  Tensor y = randint(0, 10, {24}, TensorOptions().dtype(kLong));

  // A pinned batch copied without blocking, as the trainer feeds CUDA.
  Tensor x_gpu = x.pin_memory().to(cuda_device(), /*non_blocking=*/true);
  Tensor y_gpu = y.pin_memory().to(cuda_device(), /*non_blocking=*/true);
  Tensor loss_cpu = F::cross_entropy(cpu.forward(x), y);
  Tensor loss_gpu = F::cross_entropy(gpu.forward(x_gpu), y_gpu);
  check_same(loss_gpu, loss_cpu, tol.loss, "loss");
  loss_cpu.backward();
  loss_gpu.backward();

  auto cpu_params = cpu.module->named_parameters(), gpu_params = gpu.module->named_parameters();
  REQUIRE(cpu_params.size() == gpu_params.size());
  std::vector<Tensor> grads_cpu, grads_gpu;
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    const Tensor& pc = cpu_params[i].value();
    const Tensor& pg = gpu_params[i].value();
    REQUIRE(pg.grad().defined());
    check_same(pg.grad(), pc.grad(), tol.grad, "grad of " + cpu_params[i].key());
    grads_cpu.push_back(pc.grad().clone());
    grads_gpu.push_back(pg.grad().clone());
  }
  auto cpu_buffers = cpu.module->named_buffers(), gpu_buffers = gpu.module->named_buffers();
  for (size_t i = 0; i < cpu_buffers.size(); ++i)
    check_same(gpu_buffers[i].value(), cpu_buffers[i].value(), tol.buffer, "buffer " + cpu_buffers[i].key());

  // The trainer's optimizer, created after the move.
  const double lr = 2e-3, eps = 1e-8;
  optim::AdamW opt_cpu(cpu.module->parameters(), optim::AdamWOptions(lr).weight_decay(1e-4).eps(eps));
  optim::AdamW opt_gpu(gpu.module->parameters(), optim::AdamWOptions(lr).weight_decay(1e-4).eps(eps));
  opt_cpu.step();
  opt_gpu.step();
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    CHECK(gpu_params[i].value().is_cuda());
    check_first_adamw_step(gpu_params[i].value(), cpu_params[i].value(), grads_gpu[i], grads_cpu[i], lr, eps,
                           "parameter " + cpu_params[i].key() + " after AdamW");
    auto& state =
        static_cast<optim::AdamParamState&>(*opt_gpu.state().at(gpu_params[i].value().unsafeGetTensorImpl()));
    CHECK(state.exp_avg().is_cuda());
    CHECK(state.step() == 1);
  }
  backends::cudnn::allow_tf32 = tf32;
}

}  // namespace

TEST_CASE("cuda train step: the trainer's MLP gives the CPU's loss, gradients and AdamW step") {
  // Products of 784 terms in float32 (cuBLAS and the CPU sum in different orders).
  check_train_step(make_mlp, {{1e-5, 1e-5}, {2e-6, 2e-3}, {1e-5, 1e-4}});
}

TEST_CASE(
    "cuda train step: the trainer's CNN gives the CPU's loss, gradients, BatchNorm statistics and AdamW "
    "step") {
  // Convolutions (cuDNN's algorithms) and batch statistics over 24 images.
  check_train_step(make_cnn, {{2e-5, 2e-5}, {5e-6, 5e-3}, {1e-5, 1e-4}});
}
