// A character-level LSTM language model on a small repeating text: Embedding -> 2-layer LSTM ->
// Linear, trained with AdamW and gradient clipping on truncated back-propagation windows whose
// hidden state is carried (detached) from one window to the next, then asked to continue a
// prompt greedily. Checks: the loss falls well below uniform guessing and the model continues
// the text as it was written.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

struct CharModelImpl : torch::nn::Module {
  CharModelImpl(int64_t vocab, int64_t embed, int64_t hidden)
      : embedding(vocab, embed),
        lstm(torch::nn::LSTMOptions(embed, hidden).num_layers(2).batch_first(true)),
        head(hidden, vocab) {
    register_module("embedding", embedding);
    register_module("lstm", lstm);
    register_module("head", head);
  }

  std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>> forward(
      torch::Tensor tokens, torch::optional<std::tuple<torch::Tensor, torch::Tensor>> state = torch::nullopt) {
    auto [output, new_state] = lstm->forward(embedding->forward(tokens), state);
    return {head->forward(output), new_state};
  }

  torch::nn::Embedding embedding;
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(CharModel);

int main() {
  torch::manual_seed(0);
  const std::string text = "the quick brown fox jumps over the lazy dog. ";
  std::string corpus;
  for (int i = 0; i < 40; ++i) corpus += text;
  std::map<char, int64_t> index;
  std::vector<char> chars;
  for (char c : corpus)
    if (!index.count(c)) {
      index[c] = static_cast<int64_t>(chars.size());
      chars.push_back(c);
    }
  const int64_t vocab = static_cast<int64_t>(chars.size());
  std::vector<int64_t> ids;
  for (char c : corpus) ids.push_back(index[c]);
  torch::Tensor data = torch::tensor(ids, torch::kLong);

  CharModel model(vocab, 16, 64);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  const int64_t window = 32, batch = 4;
  const int64_t stream_length = (data.size(0) - 1) / batch;
  torch::Tensor inputs = data.narrow(0, 0, batch * stream_length).view({batch, stream_length});
  torch::Tensor targets = data.narrow(0, 1, batch * stream_length).view({batch, stream_length});

  double loss_value = 0;
  for (int epoch = 0; epoch < 8; ++epoch) {
    torch::optional<std::tuple<torch::Tensor, torch::Tensor>> state;
    for (int64_t start = 0; start + window <= stream_length; start += window) {
      auto x = inputs.narrow(1, start, window), y = targets.narrow(1, start, window);
      optimizer.zero_grad();
      auto [logits, new_state] = model->forward(x, state);
      auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), y.reshape({-1}));
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      state = std::make_tuple(std::get<0>(new_state).detach(), std::get<1>(new_state).detach());
      loss_value = loss.item<double>();
    }
    std::printf("epoch %d: loss %.4f\n", epoch + 1, loss_value);
  }

  int failures = 0;
  if (!(loss_value < 0.5 * std::log(static_cast<double>(vocab)))) {
    std::cerr << "FAIL: the loss " << loss_value << " is not well below uniform guessing" << std::endl;
    ++failures;
  }
  model->eval();
  torch::NoGradGuard no_grad;
  std::string prompt = "the quick brown ", generated = prompt;
  std::vector<int64_t> prompt_ids;
  for (char c : prompt) prompt_ids.push_back(index[c]);
  auto [logits, state] = model->forward(torch::tensor(prompt_ids, torch::kLong).unsqueeze(0));
  for (int i = 0; i < 20; ++i) {
    int64_t next = logits.select(1, logits.size(1) - 1).argmax(-1).item<int64_t>();
    generated += chars[static_cast<size_t>(next)];
    std::tie(logits, state) = model->forward(torch::tensor({next}, torch::kLong).unsqueeze(0), state);
  }
  std::cout << "generated: \"" << generated << "\"" << std::endl;
  if (generated.rfind("the quick brown fox", 0) != 0) {
    std::cerr << "FAIL: the model did not continue the text" << std::endl;
    ++failures;
  }
  std::cout << (failures ? "FAILED" : "ok") << std::endl;
  return failures ? 1 : 0;
}
