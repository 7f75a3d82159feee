// amp_demo: PyTorch's automatic-mixed-precision training loop written as a libtorch program
// (docs/mixed_precision.md's example, kept here so that it compiles and runs in CI).
// An MLP learns to classify noisy points around ten random centres; the forward pass and the
// loss run under autocast, backward outside it, and with float16 a GradScaler scales the loss.
//
//   build/examples/amp_demo            # float16 autocast + GradScaler, on the GPU when there is one
//   build/examples/amp_demo bf16       # bfloat16 autocast (PyTorch's recipe uses no scaler)
//   build/examples/amp_demo bf16 cpu
#include <cstdio>
#include <string>

#include <ember/ember.h>

int main(int argc, char** argv) {
  namespace torch = ember;
  namespace nn = torch::nn;
  const std::string mode = argc > 1 ? argv[1] : "fp16";
  const bool want_cuda = argc > 2 ? std::string(argv[2]) == "cuda" : torch::cuda::is_available();
  if ((mode != "fp16" && mode != "bf16") || (want_cuda && !torch::cuda::is_available())) {
    std::fprintf(stderr, "usage: amp_demo [fp16|bf16] [cpu|cuda] (cuda needs a GPU)\n");
    return 2;
  }
  const torch::Device device(want_cuda ? torch::kCUDA : torch::kCPU);
  const torch::ScalarType dtype = mode == "fp16" ? torch::kFloat16 : torch::kBFloat16;
  torch::manual_seed(0);

  // 4096 points in 64 dimensions: a random centre per class plus unit noise.
  torch::Tensor centres = torch::randn({10, 64});
  torch::Tensor labels = torch::randint(0, 10, {4096});
  torch::Tensor inputs = (centres.index_select(0, labels) + torch::randn({4096, 64})).to(device);
  labels = labels.to(device);

  nn::Sequential model(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 10));
  model->to(device);  // the weights stay float32: autocast casts them per op
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3));
  // A disabled scaler passes everything through, so one loop serves both dtypes.
  torch::amp::GradScaler scaler(device.is_cuda() ? "cuda" : "cpu",
                                torch::amp::GradScalerOptions().enabled(dtype == torch::kFloat16));

  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    torch::Tensor x = inputs.narrow(0, step % 16 * 256, 256), y = labels.narrow(0, step % 16 * 256, 256);
    optimizer.zero_grad();
    torch::Tensor logits, loss;
    {
      torch::AutocastGuard autocast(device.type(), dtype);  // with torch.autocast(device_type, dtype):
      logits = model->forward(x);                           // float16/bfloat16 (linear: lower precision)
      loss = torch::nn::functional::cross_entropy(logits, y);  // float32 (nll_loss: float32 list)
    }
    scaler.scale(loss).backward();  // outside the region; gradients in the parameters' float32
    scaler.unscale_(optimizer);     // optional: the true gradients, e.g. to clip them
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    scaler.step(optimizer);         // skipped when a gradient is inf/NaN
    scaler.update();                // adapts the scale (a no-op for bf16's disabled scaler)
    if (step == 0) {
      std::printf("%s on %s: logits %s, loss %s\n", mode.c_str(), device.str().c_str(),
                  torch::scalar_type_name(logits.scalar_type()), torch::scalar_type_name(loss.scalar_type()));
      first = loss.item<double>();
    }
    last = loss.item<double>();
  }
  std::printf("loss fell from %.4f to %.4f; GradScaler scale %g\n", first, last, scaler.get_scale());
  return last < 0.5 * first ? 0 : 1;
}
