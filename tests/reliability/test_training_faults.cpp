// Faults in a training loop, caught where the user asked for them: anomaly mode naming the
// op whose backward made a NaN (in a model, PyTorch's text), clip_grad_norm_'s
// error_if_nonfinite, a GradScaler skipping the step of an inf loss or inf gradients with
// the parameters and optimizer state bit for bit as they were, a DataLoader whose shuffled
// sample throws naming that sample, and every worker hung tripping the timeout. (A single
// throwing or hanging worker, unshuffled, is in tests/data/test_dataloader.cpp and
// tests/reliability/test_regressions.cpp, pytorch#21554.)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>

#include "ember/autograd/grad_mode.h"
#include "ember/data/dataloader.h"
#include "ember/data/datasets/base.h"
#include "ember/data/datasets/tensor.h"
#include "ember/data/transforms/stack.h"
#include "ember/nn/functional.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/utils.h"
#include "ember/optim/adam.h"
#include "ember/optim/grad_scaler.h"
#include "ember/optim/sgd.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;
using ember::test::values;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes().vec() != b.sizes().vec()) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

bool same_dict(const Dict& a, const Dict& b) {
  if (a.keys() != b.keys()) return false;
  for (const auto& item : a)
    if (!bitwise_equal(item.value(), b[item.key()])) return false;
  return true;
}

/// Deep copies of a state dict (state_dict() shares the parameters' storage).
Dict snapshot(const Dict& d) {
  Dict out;
  for (const auto& item : d) out.insert(item.key(), item.value().clone());
  return out;
}

struct MlpImpl : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  MlpImpl() {
    fc1 = register_module("fc1", nn::Linear(3, 5));
    fc2 = register_module("fc2", nn::Linear(5, 2));
  }
  /// The rows of `keep` only go on after the first layer (a filtered batch).
  Tensor forward(const Tensor& x, const Tensor& keep) {
    return fc2->forward(relu(fc1->forward(x)).index_select(0, keep));
  }
};
EMBER_MODULE(Mlp);

}  // namespace

TEST_CASE("test_training_faults: anomaly mode names the layer whose backward made the NaN") {
  // A corrupt sample (an inf feature in row 2) is dropped after the first layer: the loss is
  // finite, but fc1's weight gradient x^T g multiplies that inf by row 2's zero gradient. The
  // first backward to return NaN is fc1's addmm(bias, x, W^T), in its 2nd output (W^T's
  // gradient); PyTorch names it the same: linear on a matrix is addmm.
  manual_seed(3);
  Mlp net;
  Tensor x = randn({4, 3});
  x[2][0].fill_(kInf);
  Tensor keep = tensor(std::vector<int64_t>{0, 1, 3});
  Tensor target = randn({3, 2});
  auto loss_of = [&] { return nn::functional::mse_loss(net->forward(x, keep), target); };
  CHECK(std::isfinite(loss_of().item<double>()));
  {
    autograd::DetectAnomalyGuard anomaly;
    check_error([&] { loss_of().backward(); },
                "Function 'AddmmBackward0' returned nan values in its 2th output.");
  }
  // Unasked, the NaN lands in the gradient; clip_grad_norm_ catches it when asked to.
  net->zero_grad();
  loss_of().backward();
  CHECK(std::isnan(net->fc1->weight.grad().sum().item<double>()));
  CHECK(std::isfinite(net->fc2->weight.grad().sum().item<double>()));
  check_error([&] { nn::utils::clip_grad_norm_(net->parameters(), 1.0, 2.0, /*error_if_nonfinite=*/true); },
              "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
              "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`");
  // An inf gradient with no NaN is not an anomaly (PyTorch checks for NaN only).
  Tensor w = tensor(std::vector<float>{0.0f, 1.0f}).requires_grad_();
  {
    autograd::DetectAnomalyGuard anomaly;
    w.sqrt().sum().backward();  // d sqrt(w) = 1 / (2 sqrt(w)): inf at 0
  }
  CHECK(std::isinf(w.grad()[0].item<double>()));
}

TEST_CASE("test_training_faults: GradScaler skips the step of an inf loss or gradient, bit for bit") {
  // Three clean steps give the optimizer state; then an overflowing step must leave every
  // parameter and every state tensor (step counts included) exactly as it was, halve the
  // scale, and the next clean step must go on from there.
  struct Case {
    const char* what;
    bool adam;
    bool inf_in_loss;    // else one gradient element is inf
    bool unscale_first;  // unscale_ + clip_grad_norm_ before step, as PyTorch's recipe
  };
  for (Case c : {Case{"Adam, inf loss", true, true, false}, Case{"Adam, inf gradient", true, false, false},
                 Case{"SGD momentum, inf gradient after unscale_ and clipping", false, false, true}}) {
    INFO(c.what);
    manual_seed(11);
    Mlp net;
    std::unique_ptr<optim::Optimizer> opt;
    if (c.adam)
      opt = std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(1e-2));
    else
      opt = std::make_unique<optim::SGD>(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    amp::GradScaler scaler("cpu", amp::GradScalerOptions().init_scale(256.0).growth_interval(100));
    Tensor x = randn({4, 3}), target = randn({4, 2});
    Tensor all = tensor(std::vector<int64_t>{0, 1, 2, 3});
    auto train_step = [&](bool overflow) {
      opt->zero_grad();
      Tensor loss = nn::functional::mse_loss(net->forward(x, all), target);
      if (overflow && c.inf_in_loss) loss = loss * kInf;
      scaler.scale(loss).backward();
      if (overflow && !c.inf_in_loss) net->fc2->bias.grad()[1].fill_(kInf);
      if (c.unscale_first) {
        scaler.unscale_(*opt);
        nn::utils::clip_grad_norm_(net->parameters(), 1.0);
      }
      scaler.step(*opt);
      const bool found = scaler.found_inf(*opt);
      scaler.update();
      return found;
    };
    for (int i = 0; i < 3; ++i) CHECK_FALSE(train_step(false));
    const Dict params = snapshot(net->state_dict()), state = snapshot(opt->state_dict());
    REQUIRE(!state.is_empty());
    CHECK(train_step(true));
    CHECK(scaler.get_scale() == 128.0);
    CHECK(same_dict(net->state_dict(), params));
    CHECK(same_dict(opt->state_dict(), state));
    CHECK_FALSE(train_step(false));  // the step after a skip changes the parameters again
    CHECK_FALSE(same_dict(net->state_dict(), params));
    CHECK(scaler.get_scale() == 128.0);
  }
}

namespace {

/// 40 samples whose get(13) throws; data = the index, target = the index.
struct ThrowsAt13 : datasets::Dataset<ThrowsAt13> {
  Example<> get(size_t i) override {
    EMBER_CHECK(i != 13, "sample ", i, " has a corrupt header");
    return {full({2}, static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i))};
  }
  std::optional<size_t> size() const override { return 40; }
};

/// Every get() blocks until the gate opens (shared by the workers' dataset copies).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};
struct Hangs : datasets::Dataset<Hangs> {
  std::shared_ptr<Gate> gate;
  Example<> get(size_t i) override {
    std::unique_lock<std::mutex> lock(gate->mu);
    gate->cv.wait(lock, [&] { return gate->open; });
    return {full({1}, static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i))};
  }
  std::optional<size_t> size() const override { return 12; }
};

}  // namespace

TEST_CASE("test_training_faults: a shuffled sample that throws is named by its index, not its position") {
  // The reference order: the same seed's batches from a dataset that does not throw.
  auto clean = make_data_loader(
      datasets::TensorDataset(arange(40, kFloat), arange(40, kLong)).map(transforms::Stack<>()),
      DataLoaderOptions(4).shuffle(true).seed(5));
  std::vector<std::vector<double>> order;
  for (auto& b : *clean) order.push_back(values(b.target));
  size_t bad_batch = 0;
  while (std::find(order[bad_batch].begin(), order[bad_batch].end(), 13.0) == order[bad_batch].end())
    ++bad_batch;
  for (size_t workers : {0, 2}) {
    INFO(workers << " workers");
    auto loader = make_data_loader(ThrowsAt13().map(transforms::Stack<>()),
                                   DataLoaderOptions(4).shuffle(true).seed(5).workers(workers));
    size_t delivered = 0;
    std::string what;
    try {
      for (auto& b : *loader) {
        CHECK(values(b.target) == order[delivered]);
        ++delivered;
      }
    } catch (const Error& e) {
      what = e.what();
    }
    CHECK(delivered == bad_batch);  // every batch before the bad one, in order
    CHECK(what.find("while loading sample 13: sample 13 has a corrupt header") != std::string::npos);
  }
}

TEST_CASE("test_training_faults: every worker hung: the timeout fires, in either delivery order") {
  for (bool ordered : {true, false}) {
    INFO("enforce_ordering " << ordered);
    auto gate = std::make_shared<Gate>();
    Hangs hangs;
    hangs.gate = gate;
    auto loader =
        make_data_loader(hangs.map(transforms::Stack<>()),
                         DataLoaderOptions(2).workers(3).shuffle(false).enforce_ordering(ordered).timeout(
                             std::chrono::milliseconds(200)));
    auto start = std::chrono::steady_clock::now();
    check_error([&] { loader->begin(); }, "DataLoader timed out after 0.2 seconds");
    MESSAGE(
        "timed out after " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                           << " s (limit 0.2 s)");
    // Once the workers are free again, a new epoch runs whole.
    gate->release();
    std::vector<double> got;
    for (auto& b : *loader) {
      auto v = values(b.target);
      got.insert(got.end(), v.begin(), v.end());
    }
    std::sort(got.begin(), got.end());
    std::vector<double> want(12);
    for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<double>(i);
    CHECK(got == want);
  }
}
