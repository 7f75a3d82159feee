// fit_demo: fits a two-layer MLP to y = sin(3x) + noise with plain autograd and SGD, printing
// the loss as it falls. It uses only ember's public API, the way a libtorch program would.
// Run: build/examples/fit_demo [steps]
#include <cstdio>
#include <cstdlib>

#include <ember/ember.h>

int main(int argc, char** argv) {
  namespace torch = ember;
  int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  torch::manual_seed(0);

  // 256 points on [-1, 1]; the target is a smooth curve plus a little noise.
  torch::Tensor x = torch::linspace(-1, 1, 256).unsqueeze(1);
  torch::Tensor y = torch::sin(3 * x) + 0.05 * torch::randn({256, 1});

  // A 1-32-1 tanh network with small random weights.
  torch::Tensor w1 = (torch::randn({1, 32}) * 1.0).requires_grad_();
  torch::Tensor b1 = torch::zeros({32}, torch::requires_grad());
  torch::Tensor w2 = (torch::randn({32, 1}) * 0.2).requires_grad_();
  torch::Tensor b2 = torch::zeros({1}, torch::requires_grad());
  std::vector<torch::Tensor> params{w1, b1, w2, b2};
  const double lr = 0.1;

  double first = 0, last = 0;
  for (int step = 0; step <= steps; ++step) {
    torch::Tensor hidden = torch::tanh(x.matmul(w1) + b1);
    torch::Tensor pred = hidden.matmul(w2) + b2;
    torch::Tensor loss = (pred - y).square().mean();
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
    loss.backward();
    {
      torch::NoGradGuard no_grad;
      for (auto& p : params) p.sub_(p.grad() * lr);
    }
    double l = loss.item<double>();
    if (step == 0) first = l;
    last = l;
    if (step % (steps / 10 > 0 ? steps / 10 : 1) == 0) std::printf("step %5d  loss %.6f\n", step, l);
  }
  std::printf("loss fell from %.4f to %.4f\n", first, last);
  return last < first ? 0 : 1;
}
