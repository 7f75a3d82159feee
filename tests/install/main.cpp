// Built against an installed ember by .ci/run: a libtorch-style program.
#include <ember/ember.h>

#include <iostream>

namespace torch = ember;

int main() {
  torch::Tensor x = torch::ones({2, 2}, torch::requires_grad());
  torch::Tensor y = (x * x).sum();
  y.backward();
  std::cout << x.grad() << "\n";
  return x.grad().sum().item<double>() == 8.0 ? 0 : 1;
}
