// A DCGAN on MNIST-format images (argv[1]: the dataset directory; argv[2]: batches to train),
// shaped as the C++ frontend tutorial's: a generator of transposed convolutions with batch norm
// and a discriminator of strided convolutions with leaky ReLU, both Sequentials, trained with
// Adam(0.5, 0.999) on binary cross-entropy with smoothed real labels, then checkpointed with
// torch::save and restored with torch::load. Checks: finite losses, images in [-1, 1], and a
// restored generator that reproduces the trained one's output.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

const int64_t kNoiseSize = 100;
const int64_t kBatchSize = 64;

struct DCGANGeneratorImpl : torch::nn::Module {
  explicit DCGANGeneratorImpl(int kNoiseSize)
      : conv1(torch::nn::ConvTranspose2dOptions(kNoiseSize, 256, 4).bias(false)),
        batch_norm1(256),
        conv2(torch::nn::ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)),
        batch_norm2(128),
        conv3(torch::nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)),
        batch_norm3(64),
        conv4(torch::nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
    register_module("conv4", conv4);
    register_module("batch_norm1", batch_norm1);
    register_module("batch_norm2", batch_norm2);
    register_module("batch_norm3", batch_norm3);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(batch_norm1(conv1(x)));
    x = torch::relu(batch_norm2(conv2(x)));
    x = torch::relu(batch_norm3(conv3(x)));
    x = torch::tanh(conv4(x));
    return x;
  }

  torch::nn::ConvTranspose2d conv1;
  torch::nn::BatchNorm2d batch_norm1;
  torch::nn::ConvTranspose2d conv2;
  torch::nn::BatchNorm2d batch_norm2;
  torch::nn::ConvTranspose2d conv3;
  torch::nn::BatchNorm2d batch_norm3;
  torch::nn::ConvTranspose2d conv4;
};
TORCH_MODULE(DCGANGenerator);

int main(int argc, char** argv) {
  const std::string data_root = argc > 1 ? argv[1] : "./mnist";
  const int64_t max_batches = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 1000000;
  torch::manual_seed(1);

  DCGANGenerator generator(kNoiseSize);
  torch::nn::Sequential discriminator(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(128),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(256),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(256, 1, 3).stride(1).padding(0).bias(false)),
      torch::nn::Sigmoid());

  auto dataset = torch::data::datasets::MNIST(data_root)
                     .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                     .map(torch::data::transforms::Stack<>());
  auto data_loader = torch::data::make_data_loader(std::move(dataset),
                                                   torch::data::DataLoaderOptions().batch_size(kBatchSize).workers(2));

  torch::optim::Adam generator_optimizer(generator->parameters(),
                                         torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999)));
  torch::optim::Adam discriminator_optimizer(discriminator->parameters(),
                                             torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999)));

  int failures = 0;
  int64_t batch_index = 0;
  for (torch::data::Example<>& batch : *data_loader) {
    // Train the discriminator with real images (labels in [0.8, 1]) and generated ones.
    discriminator->zero_grad();
    torch::Tensor real_images = batch.data;
    torch::Tensor real_labels = torch::empty(batch.data.size(0)).uniform_(0.8, 1.0);
    torch::Tensor real_output = discriminator->forward(real_images).reshape(real_labels.sizes());
    torch::Tensor d_loss_real = torch::binary_cross_entropy(real_output, real_labels);
    d_loss_real.backward();

    torch::Tensor noise = torch::randn({batch.data.size(0), kNoiseSize, 1, 1});
    torch::Tensor fake_images = generator->forward(noise);
    torch::Tensor fake_labels = torch::zeros(batch.data.size(0));
    torch::Tensor fake_output = discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
    torch::Tensor d_loss_fake = torch::binary_cross_entropy(fake_output, fake_labels);
    d_loss_fake.backward();
    torch::Tensor d_loss = d_loss_real + d_loss_fake;
    discriminator_optimizer.step();

    // Train the generator to fool the discriminator.
    generator->zero_grad();
    fake_labels.fill_(1);
    fake_output = discriminator->forward(fake_images).reshape(fake_labels.sizes());
    torch::Tensor g_loss = torch::binary_cross_entropy(fake_output, fake_labels);
    g_loss.backward();
    generator_optimizer.step();

    std::printf("[%2ld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long>(batch_index), d_loss.item<float>(),
                g_loss.item<float>());
    if (!std::isfinite(d_loss.item<float>()) || !std::isfinite(g_loss.item<float>())) ++failures;
    if (fake_images.min().item<float>() < -1 || fake_images.max().item<float>() > 1) ++failures;
    if (++batch_index >= max_batches) break;
  }

  torch::save(generator, "generator-checkpoint.pt");
  torch::save(generator_optimizer, "generator-optimizer-checkpoint.pt");
  DCGANGenerator restored(kNoiseSize);
  torch::load(restored, "generator-checkpoint.pt");
  torch::optim::Adam restored_optimizer(restored->parameters(), torch::optim::AdamOptions(2e-4));
  torch::load(restored_optimizer, "generator-optimizer-checkpoint.pt");
  generator->eval();
  restored->eval();
  torch::Tensor noise = torch::randn({8, kNoiseSize, 1, 1});
  torch::NoGradGuard no_grad;
  torch::Tensor samples = generator->forward(noise), again = restored->forward(noise);
  if ((samples - again).abs().max().item<float>() != 0) {
    std::cerr << "FAIL: the restored generator differs" << std::endl;
    ++failures;
  }
  std::remove("generator-checkpoint.pt");
  std::remove("generator-optimizer-checkpoint.pt");
  std::cout << (failures ? "FAILED" : "ok") << std::endl;
  return failures ? 1 : 0;
}
