// The classic C++ MNIST example: a small CNN (two convolutions, dropout, two linear layers)
// trained with SGD + momentum on the MNIST-format dataset in the directory given as argv[1]
// (Fashion-MNIST works the same), then evaluated on the test split. argv[2] caps the batches per
// epoch so CI can run it briefly. Checks: the loss is finite and falls, accuracy beats chance.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

template <typename DataLoader>
double train(size_t epoch, Net& model, torch::Device device, DataLoader& data_loader,
             torch::optim::Optimizer& optimizer, size_t max_batches) {
  model.train();
  size_t batch_idx = 0;
  double first_loss = 0, last_loss = 0;
  for (auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
    if (batch_idx == 0) first_loss = loss.template item<float>();
    last_loss = loss.template item<float>();
    if (batch_idx++ % 10 == 0)
      std::printf("Train Epoch: %zu [%5zu batches] Loss: %.4f\n", epoch, batch_idx, loss.template item<float>());
    if (batch_idx >= max_batches) break;
  }
  return last_loss - first_loss;
}

template <typename DataLoader>
double test(Net& model, torch::Device device, DataLoader& data_loader, size_t max_batches) {
  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int64_t correct = 0, seen = 0;
  size_t batches = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum).template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
    seen += data.size(0);
    if (++batches >= max_batches) break;
  }
  test_loss /= seen;
  double accuracy = static_cast<double>(correct) / seen;
  std::printf("Test set: Average loss: %.4f | Accuracy: %.3f\n", test_loss, accuracy);
  return accuracy;
}

int main(int argc, char** argv) {
  const std::string data_root = argc > 1 ? argv[1] : "./data";
  const size_t max_batches = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1000000;
  const int64_t kTrainBatchSize = 64, kTestBatchSize = 1000;
  torch::manual_seed(1);

  torch::DeviceType device_type = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  std::cout << (device_type == torch::kCUDA ? "Training on GPU." : "Training on CPU.") << std::endl;
  torch::Device device(device_type);

  Net model;
  model.to(device);

  auto train_dataset = torch::data::datasets::MNIST(data_root)
                           .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                           .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  auto train_loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(train_dataset), kTrainBatchSize);

  auto test_dataset = torch::data::datasets::MNIST(data_root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                          .map(torch::data::transforms::Stack<>());
  auto test_loader = torch::data::make_data_loader(std::move(test_dataset), kTestBatchSize);

  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));

  std::cout << "train examples: " << train_dataset_size << std::endl;
  double change = train(1, model, device, *train_loader, optimizer, max_batches);
  double accuracy = test(model, device, *test_loader, std::max<size_t>(1, max_batches / 10));
  if (!(change < 0) || !(accuracy > 0.2)) {
    std::cerr << "FAIL: the loss did not fall (change " << change << ") or accuracy " << accuracy
              << " is not above chance" << std::endl;
    return 1;
  }
  std::cout << "ok" << std::endl;
}
