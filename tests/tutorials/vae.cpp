// A variational autoencoder on MNIST-format images (argv[1]: the dataset directory; argv[2]:
// batches to train): a Linear encoder to mean and log-variance, the reparameterisation trick, a
// Linear decoder with a sigmoid, and the loss binary cross-entropy (summed) + KL divergence,
// trained with Adam. Checks: finite losses, a falling loss, decoded pixels in [0, 1].
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <tuple>

struct VAEImpl : torch::nn::Module {
  VAEImpl(int64_t image_size, int64_t h_dim, int64_t z_dim)
      : fc1(image_size, h_dim), fc2(h_dim, z_dim), fc3(h_dim, z_dim), fc4(z_dim, h_dim), fc5(h_dim, image_size) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
    register_module("fc4", fc4);
    register_module("fc5", fc5);
  }

  std::pair<torch::Tensor, torch::Tensor> encode(torch::Tensor x) {
    auto h = torch::nn::functional::relu(fc1->forward(x));
    return {fc2->forward(h), fc3->forward(h)};
  }

  torch::Tensor reparameterize(torch::Tensor mu, torch::Tensor log_var) {
    if (is_training()) {
      auto std = log_var.div(2).exp_();
      auto eps = torch::randn_like(std);
      return eps.mul(std).add_(mu);
    }
    return mu;
  }

  torch::Tensor decode(torch::Tensor z) {
    auto h = torch::nn::functional::relu(fc4->forward(z));
    return torch::sigmoid(fc5->forward(h));
  }

  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> forward(torch::Tensor x) {
    auto [mu, log_var] = encode(x);
    auto z = reparameterize(mu, log_var);
    return {decode(z), mu, log_var};
  }

  torch::nn::Linear fc1, fc2, fc3, fc4, fc5;
};
TORCH_MODULE(VAE);

int main(int argc, char** argv) {
  const std::string data_root = argc > 1 ? argv[1] : "./mnist";
  const int64_t max_batches = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 1000000;
  torch::manual_seed(1);
  const int64_t image_size = 28 * 28, h_dim = 400, z_dim = 20, batch_size = 100;

  auto dataset = torch::data::datasets::MNIST(data_root).map(torch::data::transforms::Stack<>());
  auto num_samples = dataset.size().value();
  auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(std::move(dataset), batch_size);

  VAE model(image_size, h_dim, z_dim);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  std::cout << "examples: " << num_samples << std::endl;

  int failures = 0;
  int64_t batch_index = 0;
  double first = 0, last = 0;
  model->train();
  for (auto& batch : *loader) {
    auto images = batch.data.reshape({-1, image_size});
    auto [reconstruction, mu, log_var] = model->forward(images);
    auto reconstruction_loss =
        torch::nn::functional::binary_cross_entropy(reconstruction, images,
                                                    torch::nn::functional::BinaryCrossEntropyFuncOptions().reduction(torch::kSum));
    auto kl_divergence = -0.5 * torch::sum(1 + log_var - mu.pow(2) - log_var.exp());
    auto loss = reconstruction_loss + kl_divergence;
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    double per_example = loss.item<double>() / images.size(0);
    if (batch_index == 0) first = per_example;
    last = per_example;
    if (batch_index % 5 == 0) std::printf("batch %ld: loss per image %.2f\n", static_cast<long>(batch_index), per_example);
    if (!std::isfinite(per_example)) ++failures;
    if (reconstruction.min().item<float>() < 0 || reconstruction.max().item<float>() > 1) ++failures;
    if (++batch_index >= max_batches) break;
  }
  if (!(last < first)) {
    std::cerr << "FAIL: the loss did not fall (" << first << " -> " << last << ")" << std::endl;
    ++failures;
  }
  model->eval();
  torch::NoGradGuard no_grad;
  auto samples = model->decode(torch::randn({4, z_dim}));
  if (samples.sizes() != torch::IntArrayRef({4, image_size})) ++failures;
  std::cout << (failures ? "FAILED" : "ok") << std::endl;
  return failures ? 1 : 0;
}
