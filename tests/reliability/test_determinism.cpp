// Determinism: one seed gives bit-identical training on the CPU whatever the thread count
// (1, 2, 4) and the number of DataLoader workers (0, 1, 3), with shuffling, a random
// transform and dropout; the kernels under it (sums, GEMM, convolution) give the same bits
// on any thread count; and deterministic mode (core/deterministic.h): its flags, PyTorch's
// alert text, and the CPU's assigning scatters, whose repeated indices then resolve as one
// thread would (the last write wins).
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "ember/core/deterministic.h"
#include "ember/data/dataloader.h"
#include "ember/data/datasets/base.h"
#include "ember/data/random.h"
#include "ember/data/transforms/lambda.h"
#include "ember/data/transforms/stack.h"
#include "ember/nn/functional.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/linear.h"
#include "ember/optim/adamw.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes().vec() != b.sizes().vec()) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

/// Restores the thread count and deterministic mode a test changes.
struct RestoreSettings {
  int threads = get_num_threads();
  bool deterministic = are_deterministic_algorithms_enabled();
  bool warn_only = is_deterministic_algorithms_warn_only_enabled();
  ~RestoreSettings() {
    set_num_threads(threads);
    use_deterministic_algorithms(deterministic, warn_only);
  }
};

/// Big enough that the step's kernels split over threads: TensorIter's grain is 32768
/// elements (conv outputs: 32 * 16 * 14 * 14 = 100352) and a convolution's 2^20
/// multiply-adds (32 * 16 * 196 * 27 = 2.7M).
constexpr int64_t kSamples = 96, kBatch = 32, kSteps = 6;

struct Images : datasets::Dataset<Images> {
  Tensor x;
  Images() {
    manual_seed(8);
    x = randn({kSamples, 3, 16, 16});
  }
  Example<> get(size_t i) override {
    return {x[static_cast<int64_t>(i)], scalar_tensor(static_cast<int64_t>(i % 10), kLong)};
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(kSamples); }
};

struct NetImpl : nn::Module {
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Dropout drop{nullptr};
  nn::Linear fc{nullptr};
  NetImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(3, 16, 3)));
    bn = register_module("bn", nn::BatchNorm2d(16));
    drop = register_module("drop", nn::Dropout(0.25));
    fc = register_module("fc", nn::Linear(16 * 14 * 14, 10));
  }
  Tensor forward(const Tensor& x) {
    return fc->forward(drop->forward(relu(bn->forward(conv->forward(x))).flatten(1)));
  }
};
EMBER_MODULE(Net);

/// kSteps of training from seed 1 with `threads` threads and `workers` loader workers; returns
/// the final state dict (parameters and BatchNorm buffers).
Dict train(int threads, size_t workers, uint64_t loader_seed = 21) {
  set_num_threads(threads);
  // A random flip per sample, drawn from the loader's per-sample stream (data/random.h).
  auto flip = transforms::Lambda<>([](Example<> e) {
    if (sample_rng().uniform() < 0.5) e.data = e.data.flip({2});
    return e;
  });
  auto loader = make_data_loader(Images().map(flip).map(transforms::Stack<>()),
                                 DataLoaderOptions(kBatch).shuffle(true).seed(loader_seed).workers(workers));
  manual_seed(1);
  Net net;
  optim::AdamW opt(net->parameters(), optim::AdamWOptions(1e-2));
  int64_t step = 0;
  for (uint64_t epoch = 0; step < kSteps; ++epoch) {
    loader->set_epoch(epoch);
    for (auto& batch : *loader) {
      opt.zero_grad();
      nn::functional::cross_entropy(net->forward(batch.data), batch.target).backward();
      opt.step();
      if (++step == kSteps) break;
    }
  }
  Dict out;
  for (const auto& item : net->state_dict()) out.insert(item.key(), item.value().clone());
  return out;
}

/// The threads a parallel loop of `n` elements actually runs on (so the comparisons below
/// really compare different splits of the work).
size_t threads_used(int64_t n) {
  std::mutex mu;
  std::set<std::thread::id> ids;
  parallel_for(n, kGrainSize, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  return ids.size();
}

}  // namespace

TEST_CASE("test_determinism: one seed trains bit-identically on 1, 2, 4 threads and 0, 1, 3 workers") {
  RestoreSettings restore;
  set_num_threads(4);
  CHECK(threads_used(16 * kGrainSize) == 4);
  set_num_threads(1);
  CHECK(threads_used(16 * kGrainSize) == 1);
  const Dict reference = train(1, 0);
  for (int threads : {1, 2, 4})
    for (size_t workers : {size_t{0}, size_t{1}, size_t{3}}) {
      if (threads == 1 && workers == 0) continue;
      INFO(threads << " threads, " << workers << " workers");
      const Dict got = train(threads, workers);
      REQUIRE(got.keys() == reference.keys());
      for (const auto& item : reference) {
        INFO(item.key());
        CHECK(bitwise_equal(got[item.key()], item.value()));
      }
    }
  // The comparison can fail: another data order (loader seed) gives other weights.
  CHECK_FALSE(bitwise_equal(train(1, 0, /*loader_seed=*/22)["fc.weight"], reference["fc.weight"]));
}

TEST_CASE("test_determinism: sums, GEMM and convolution give the same bits on any thread count") {
  RestoreSettings restore;
  manual_seed(17);
  Tensor v = randn({1 << 20});  // values of mixed sign: a different summation order changes the bits
  Tensor a = randn({160, 300}), b = randn({300, 200});
  Tensor x = randn({8, 3, 40, 40}, requires_grad()), w = randn({6, 3, 5, 5}, requires_grad());
  struct Result {
    Tensor sum, mean_dim, mm, conv, grad_x, grad_w;
  };
  auto run = [&](int threads) {
    set_num_threads(threads);
    Result r;
    r.sum = v.sum();
    r.mean_dim = v.view({1024, 1024}).mean({0});
    r.mm = a.mm(b);
    x.mutable_grad() = Tensor();
    w.mutable_grad() = Tensor();
    r.conv = conv2d(x, w, Tensor(), 1, 2);
    (r.conv * r.conv).sum().backward();
    r.grad_x = x.grad().clone();
    r.grad_w = w.grad().clone();
    return r;
  };
  Result one = run(1);
  for (int threads : {2, 3, 4}) {
    INFO(threads << " threads");
    Result r = run(threads);
    CHECK(bitwise_equal(r.sum, one.sum));
    CHECK(bitwise_equal(r.mean_dim, one.mean_dim));
    CHECK(bitwise_equal(r.mm, one.mm));
    CHECK(bitwise_equal(r.conv, one.conv));
    CHECK(bitwise_equal(r.grad_x, one.grad_x));
    CHECK(bitwise_equal(r.grad_w, one.grad_w));
  }
  // The sum is also right (a float64 reference of the float32 values).
  CHECK(std::abs(one.sum.item<double>() - v.to(kDouble).sum().item<double>()) < 1e-2);
}

TEST_CASE("test_determinism: use_deterministic_algorithms and its flags") {
  RestoreSettings restore;
  use_deterministic_algorithms(false);
  CHECK_FALSE(are_deterministic_algorithms_enabled());
  CHECK_FALSE(is_deterministic_algorithms_warn_only_enabled());
  ember::detail::alert_not_deterministic("some_op");  // off: nothing happens
  use_deterministic_algorithms(true);
  CHECK(are_deterministic_algorithms_enabled());
  CHECK_FALSE(is_deterministic_algorithms_warn_only_enabled());
  const std::string text =
      "index_add_cuda_ does not have a deterministic implementation, but you set "
      "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, or "
      "you "
      "can use the 'warn_only=True' option, if that's acceptable for your application.";
  try {
    ember::detail::alert_not_deterministic("index_add_cuda_");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == text);
  }
  // warn_only: PyTorch's UserWarning on stderr, and the op goes on.
  use_deterministic_algorithms(true, /*warn_only=*/true);
  CHECK(is_deterministic_algorithms_warn_only_enabled());
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  ember::detail::alert_not_deterministic("index_add_cuda_");
  std::cerr.rdbuf(old);
  CHECK(captured.str() == "UserWarning: " + text + "\n");
  use_deterministic_algorithms(false);
  CHECK_FALSE(are_deterministic_algorithms_enabled());
}

TEST_CASE("test_determinism: with repeated indices, index_put_ and scatter resolve as one thread does") {
  // Note [Deterministic assignment] (core/ops/index.cpp): with 200000 writes into 10 slots,
  // the parallel loop's threads race for each slot; deterministic mode runs the loop in order,
  // so each slot holds the value of its last write, on any thread count.
  RestoreSettings restore;
  use_deterministic_algorithms(true);
  manual_seed(2);
  constexpr int64_t n = 200000;
  Tensor idx = randint(0, 10, {n});
  Tensor value = arange(n, kDouble);
  Tensor idx2 = randint(0, 10, {4, n / 4});
  Tensor src2 = arange(n, kDouble).view({4, n / 4});
  // The reference: plain loops, last write wins.
  std::vector<double> want(10, -1.0), want2(40, -1.0);
  {
    auto ip = ember::test::values(idx), ip2 = ember::test::values(idx2.reshape({-1}));
    for (int64_t p = 0; p < n; ++p)
      want[static_cast<size_t>(ip[static_cast<size_t>(p)])] = static_cast<double>(p);
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t j = 0; j < n / 4; ++j) {
        const auto slot = static_cast<size_t>(ip2[static_cast<size_t>(r * (n / 4) + j)]);
        want2[static_cast<size_t>(r * 10) + slot] = static_cast<double>(r * (n / 4) + j);
      }
  }
  for (int threads : {1, 2, 4}) {
    INFO(threads << " threads");
    set_num_threads(threads);
    Tensor dst = full({10}, -1.0, kDouble);
    index_put_(dst, {idx}, value, /*accumulate=*/false);
    CHECK(ember::test::values(dst) == want);
    Tensor out = full({4, 10}, -1.0, kDouble).scatter(1, idx2, src2);
    CHECK(ember::test::values(out.reshape({-1})) == want2);
  }
}
