// A custom dataset as libtorch's data tutorial writes one: a Dataset subclass reading examples
// from a CSV file (written here first: two features and a class), a user transform, a shuffling
// DataLoader with worker threads, and a small classifier trained with Adam. Checks: every example
// is seen once per epoch and the classifier separates the two classes.
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

class CsvDataset : public torch::data::datasets::Dataset<CsvDataset> {
 public:
  explicit CsvDataset(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::stringstream fields(line);
      float x = 0, y = 0;
      int64_t label = 0;
      char comma = 0;
      fields >> x >> comma >> y >> comma >> label;
      rows_.push_back({x, y});
      labels_.push_back(label);
    }
  }

  torch::data::Example<> get(size_t index) override {
    torch::Tensor features = torch::tensor({rows_[index][0], rows_[index][1]});
    torch::Tensor label = torch::tensor(labels_[index], torch::kLong);
    return {features, label};
  }

  torch::optional<size_t> size() const override { return rows_.size(); }

 private:
  std::vector<std::vector<float>> rows_;
  std::vector<int64_t> labels_;
};

// Centers the features, as a user-written TensorTransform.
struct Center : public torch::data::transforms::TensorTransform<> {
  torch::Tensor operator()(torch::Tensor input) override { return input - 0.5; }
};

int main() {
  const std::string path = "custom_dataset.csv";
  {
    std::ofstream out(path);
    for (int i = 0; i < 200; ++i) {
      float x = (i % 20) / 20.0f, y = (i / 20) / 10.0f;
      out << x << "," << y << "," << (x + y > 1.0f ? 1 : 0) << "\n";
    }
  }
  torch::manual_seed(0);
  auto dataset = CsvDataset(path).map(Center()).map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(16).workers(2));

  torch::nn::Sequential model(torch::nn::Linear(2, 16), torch::nn::ReLU(), torch::nn::Linear(16, 2));
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.05));

  int failures = 0;
  for (int epoch = 0; epoch < 30; ++epoch) {
    size_t seen = 0;
    double correct = 0;
    for (auto& batch : *loader) {
      optimizer.zero_grad();
      torch::Tensor logits = model->forward(batch.data);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, batch.target);
      loss.backward();
      optimizer.step();
      seen += batch.data.size(0);
      correct += logits.argmax(1).eq(batch.target).sum().item<double>();
    }
    if (seen != 200) {
      std::cerr << "FAIL: epoch " << epoch << " saw " << seen << " examples" << std::endl;
      ++failures;
    }
    if (epoch % 10 == 9) std::printf("epoch %d: accuracy %.3f\n", epoch + 1, correct / seen);
    if (epoch == 29 && correct / seen < 0.9) {
      std::cerr << "FAIL: accuracy " << correct / seen << " after training" << std::endl;
      ++failures;
    }
  }
  std::remove(path.c_str());
  std::cout << (failures ? "FAILED" : "ok") << std::endl;
  return failures ? 1 : 0;
}
