// A ResNet on CIFAR-10-format data, as the C++ tutorials write one: a user Dataset that reads the
// CIFAR binary format (records of one label byte and 3x32x32 pixel bytes; this program first
// writes a small file of that format whose classes differ by colour), residual blocks with batch
// norm and a downsampling shortcut, global average pooling, SGD with momentum and weight decay
// under a StepLR schedule, and a checkpoint round trip. Checks: accuracy well above chance and
// a reloaded model giving the same predictions.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

class CIFAR10 : public torch::data::datasets::Dataset<CIFAR10> {
 public:
  explicit CIFAR10(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> record(kRecordSize);
    std::vector<torch::Tensor> images;
    std::vector<int64_t> labels;
    while (in.read(record.data(), kRecordSize)) {
      labels.push_back(static_cast<uint8_t>(record[0]));
      auto pixels = torch::empty({3, 32, 32}, torch::kByte);
      std::copy(record.begin() + 1, record.end(), reinterpret_cast<char*>(pixels.data_ptr<uint8_t>()));
      images.push_back(pixels.to(torch::kFloat32).div_(255));
    }
    images_ = torch::stack(images);
    targets_ = torch::tensor(labels, torch::kLong);
  }
  torch::data::Example<> get(size_t index) override {
    return {images_[static_cast<int64_t>(index)], targets_[static_cast<int64_t>(index)]};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(images_.size(0)); }

  static constexpr int kRecordSize = 1 + 3 * 32 * 32;

 private:
  torch::Tensor images_, targets_;
};

torch::nn::Conv2dOptions conv3x3(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false);
}

struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1(conv3x3(in, out, stride)), bn1(out), conv2(conv3x3(out, out, 1)), bn2(out) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    if (stride != 1 || in != out) {
      downsample = register_module(
          "downsample", torch::nn::Sequential(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                                              torch::nn::BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = torch::relu(bn1->forward(conv1->forward(x)));
    out = bn2->forward(conv2->forward(out));
    auto identity = downsample ? downsample->forward(x) : x;
    return torch::relu(out + identity);
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

struct ResNetImpl : torch::nn::Module {
  explicit ResNetImpl(int64_t num_classes)
      : conv(conv3x3(3, 16, 1)), bn(16), layers(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2)),
        fc(64, num_classes) {
    register_module("conv", conv);
    register_module("bn", bn);
    register_module("layers", layers);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn->forward(conv->forward(x)));
    x = layers->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1});
    return fc->forward(x.view({x.size(0), -1}));
  }
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Sequential layers;
  torch::nn::Linear fc;
};
TORCH_MODULE(ResNet);

int main() {
  const std::string file = "cifar_data_batch.bin";
  {
    // 4 classes; class c tints channel c % 3 and brightens the left or right half.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> noise(0, 60);
    std::ofstream out(file, std::ios::binary);
    for (int i = 0; i < 256; ++i) {
      uint8_t label = static_cast<uint8_t>(i % 4);
      out.put(static_cast<char>(label));
      for (int ch = 0; ch < 3; ++ch)
        for (int y = 0; y < 32; ++y)
          for (int x = 0; x < 32; ++x) {
            int v = noise(rng) + (ch == label % 3 ? 120 : 0) + ((x < 16) == (label < 2) ? 60 : 0);
            out.put(static_cast<char>(std::min(v, 255)));
          }
    }
  }
  torch::manual_seed(0);
  auto dataset = CIFAR10(file).map(torch::data::transforms::Normalize<>({0.3, 0.3, 0.3}, {0.25, 0.25, 0.25}))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(std::move(dataset), torch::data::DataLoaderOptions(32).workers(2));

  ResNet model(4);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(5e-4));
  torch::optim::StepLR scheduler(optimizer, /*step_size=*/3, /*gamma=*/0.5);
  double accuracy = 0;
  for (int epoch = 0; epoch < 5; ++epoch) {
    model->train();
    int64_t correct = 0, seen = 0;
    for (auto& batch : *loader) {
      auto output = model->forward(batch.data);
      auto loss = torch::nn::functional::cross_entropy(output, batch.target);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      correct += output.argmax(1).eq(batch.target).sum().item<int64_t>();
      seen += batch.data.size(0);
    }
    scheduler.step();
    accuracy = static_cast<double>(correct) / seen;
    std::printf("epoch %d: accuracy %.3f, lr %.4f\n", epoch + 1, accuracy,
                optimizer.param_groups()[0].options().get_lr());
  }
  int failures = 0;
  if (accuracy < 0.6) {
    std::cerr << "FAIL: accuracy " << accuracy << " after training" << std::endl;
    ++failures;
  }
  torch::save(model, "resnet.pt");
  ResNet reloaded(4);
  torch::load(reloaded, "resnet.pt");
  model->eval();
  reloaded->eval();
  torch::NoGradGuard no_grad;
  auto probe = torch::randn({8, 3, 32, 32});
  if (!model->forward(probe).argmax(1).eq(reloaded->forward(probe).argmax(1)).all().item<bool>()) {
    std::cerr << "FAIL: the reloaded model predicts differently" << std::endl;
    ++failures;
  }
  std::remove(file.c_str());
  std::remove("resnet.pt");
  std::cout << (failures ? "FAILED" : "ok") << std::endl;
  return failures ? 1 : 0;
}
