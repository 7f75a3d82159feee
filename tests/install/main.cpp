// Built against an installed ember by .ci/run: a libtorch-style program that touches every
// layer's installed headers (core, autograd, nn, optim, data, files).
#include <ember/ember.h>

#include <cstdio>
#include <iostream>

namespace torch = ember;

int main() {
  torch::Tensor x = torch::ones({2, 2}, torch::requires_grad());
  torch::Tensor y = (x * x).sum();
  y.backward();
  std::cout << x.grad() << "\n";
  if (x.grad().sum().item<double>() != 8.0) return 1;

  // One SGD step on a Linear layer fed by a DataLoader, then a safetensors round trip.
  torch::manual_seed(0);
  torch::nn::Linear fc(3, 2);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1));
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::TensorDataset(torch::randn({8, 3}), torch::zeros({8}, torch::kLong))
          .map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(4));
  for (auto& batch : *loader) {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(fc->forward(batch.data), batch.target).backward();
    opt.step();
  }
  const char* path = "consumer_fc.safetensors";
  torch::save(fc, path);
  torch::nn::Linear copy(3, 2);
  torch::load(copy, path);
  std::remove(path);
  bool same = torch::equal(copy->weight, fc->weight);
  std::cout << *fc << (same ? " saved and loaded\n" : " differs after load\n");
  return same ? 0 : 1;
}
