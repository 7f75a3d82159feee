// Regression tests from other engines' real bugs, each named by its issue:
//   pytorch#13669  wrong gradients through broadcasting (and in-place ops on expanded views);
//   pytorch#5059   identical random numbers in every DataLoader worker;
//   pytorch#21554  a dead worker hanging the DataLoader;
//   pytorch#33148  ranks with different batch counts hanging DDP;
//   pytorch#125224 a random generator's state reused, giving duplicate numbers.
// (ggml#709, crafted model files overflowing sizes, is covered by the safetensors reader's
// tests.) These tests also run under ThreadSanitizer (.ci/run): the DataLoader, generator and
// DDP cases are threaded.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "dist/rank_processes.h"
#include "ember/data/dataloader.h"
#include "ember/data/datasets/base.h"
#include "ember/data/transforms/stack.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::rand_leaf;
using ember::test::values;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

// ---- pytorch#13669: gradients through broadcasting ------------------------------------------

TEST_CASE("pytorch#13669: gradcheck of binary ops whose inputs broadcast") {
  manual_seed(13669);
  // (2, 1, 3) against (4, 1): both grow to (2, 4, 3); each gradient must be summed back over
  // the broadcast dimensions, the leading one included.
  Tensor a = rand_leaf({2, 1, 3}, 0.5, 1.5), b = rand_leaf({4, 1}, 0.5, 1.5);
  Tensor s = rand_leaf({}, 0.5, 1.5);  // a 0-dim operand broadcasts to anything
  using Fn = std::function<Tensor(const TensorList&)>;
  std::vector<std::pair<const char*, Fn>> ops = {
      {"add", [](const TensorList& x) { return add(x[0], x[1], 2.5); }},
      {"sub", [](const TensorList& x) { return sub(x[0], x[1], 0.5); }},
      {"mul", [](const TensorList& x) { return x[0] * x[1]; }},
      {"div", [](const TensorList& x) { return x[0] / x[1]; }},
      {"pow", [](const TensorList& x) { return pow(x[0], x[1]); }},
      {"atan2", [](const TensorList& x) { return atan2(x[0], x[1]); }},
      {"maximum", [](const TensorList& x) { return maximum(x[0], x[1] + 0.01); }},
      {"lerp", [](const TensorList& x) { return lerp(x[0], x[1], x[0] * 0.5); }},
      {"addcmul", [](const TensorList& x) { return addcmul(x[0], x[1], x[0], 0.7); }},
      {"where", [](const TensorList& x) { return where(x[0] > 1.0, x[0], x[1]); }},
  };
  for (auto& [name, fn] : ops) {
    INFO("op: " << name);
    check_grad(fn, {a, b});
    check_grad(fn, {s, b});
    check_grad(fn, {b, s});
  }
}

TEST_CASE("pytorch#13669: in-place ops broadcasting into a non-leaf, and expand's gradient") {
  manual_seed(13670);
  Tensor a = rand_leaf({3, 4}, 0.5, 1.5), b = rand_leaf({3, 1}, 0.5, 1.5), c = rand_leaf({4}, 0.5, 1.5);
  // y (3, 4) *= b (3, 1); y += c (4): b's gradient sums over the columns, c's over the rows.
  check_grad(
      [](const TensorList& x) {
        Tensor y = x[0].clone();
        y.mul_(x[1]);
        y.add_(x[2], 0.5);
        return y;
      },
      {a, b, c});
  // The broadcast done by expand: the gradient of an expanded input sums over the copies.
  check_grad([](const TensorList& x) { return x[0].expand({2, 3, 4}) * x[1]; }, {b, a});
  // Broadcasting the other way in place (into the smaller tensor) is an error, as PyTorch's.
  Tensor small = zeros({1, 4});
  check_error([&] { small.add_(ones({3, 4})); }, "output with shape [1, 4] doesn't match the broadcast shape [3, 4]");
  Tensor leaf_row = rand_leaf({1, 4});
  check_error([&] { leaf_row.mul_(b); }, "doesn't match the broadcast shape [3, 4]");
}

TEST_CASE("pytorch#13669: writing in place into an expanded view raises PyTorch's error") {
  const char* overlap =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory "
      "location. Please clone() the tensor before performing the operation.";
  Tensor base = zeros({1, 4});
  check_error([&] { base.expand({3, 4}).add_(1); }, overlap);
  check_error([&] { zeros({4}).expand({3, 4}).copy_(ones({3, 4})); }, overlap);
  check_error([&] { zeros({2}).expand({3, 2}).sigmoid_(); }, overlap);
  Tensor y = rand_leaf({1, 4}).clone();
  check_error([&] { y.expand({3, 4}).mul_(2); }, overlap);
  // Nothing was written by the failed calls.
  CHECK(values(base) == std::vector<double>(4, 0.0));
  Tensor leaf = rand_leaf({4});
  check_error([&] { leaf.expand({3, 4}).mul_(2); },
              "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

// ---- pytorch#5059: random numbers in DataLoader workers --------------------------------------

namespace {
/// Each sample draws 4 numbers from its random stream (data::sample_rng, the per-sample
/// stream of Note [Reproducible random transforms]; get_batch puts get(i) in sample i's scope).
struct RandomDraws : datasets::Dataset<RandomDraws> {
  Example<> get(size_t i) override {
    Tensor d = empty({4}, kDouble);
    for (int k = 0; k < 4; ++k) d.data_ptr<double>()[k] = sample_rng().uniform();
    return {d, scalar_tensor(static_cast<int64_t>(i))};
  }
  std::optional<size_t> size() const override { return 48; }
};

/// sample index -> its 4 numbers, for `epochs` epochs of a loader with `workers` workers.
std::vector<std::vector<double>> draws(size_t workers, uint64_t seed, int epochs = 1) {
  auto loader = make_data_loader(RandomDraws().map(transforms::Stack<>()),
                                 DataLoaderOptions(4).workers(workers).seed(seed));
  std::vector<std::vector<double>> out(48 * static_cast<size_t>(epochs));
  for (int e = 0; e < epochs; ++e)
    for (auto& b : *loader) {
      auto d = values(b.data);
      auto t = values(b.target);
      for (size_t r = 0; r < t.size(); ++r)
        out[48 * static_cast<size_t>(e) + static_cast<size_t>(t[r])].assign(d.begin() + 4 * r, d.begin() + 4 * r + 4);
    }
  return out;
}
}  // namespace

TEST_CASE("pytorch#5059: DataLoader workers draw different random numbers, reproducibly") {
  auto four = draws(4, 5059, 2);
  // No two samples (whichever worker loaded them) and no two epochs repeat a number.
  std::set<double> seen;
  for (auto& s : four) {
    REQUIRE(s.size() == 4);
    seen.insert(s.begin(), s.end());
  }
  CHECK(seen.size() == 48 * 2 * 4);
  // The same seed gives the same numbers per sample for any worker count.
  CHECK(draws(0, 5059, 2) == four);
  CHECK(draws(2, 5059, 2) == four);
  // Another seed gives others.
  CHECK(draws(4, 5060)[0] != four[0]);
}

TEST_CASE("pytorch#5059: datasets drawing from ember's default generator in workers get distinct numbers") {
  // ember::rand in get() draws from the one default CPU generator, whose reservations are
  // serialized: workers never share numbers (the order depends on scheduling, so use
  // sample_rng() for reproducible per-sample numbers).
  struct GlobalDraws : datasets::Dataset<GlobalDraws> {
    Example<> get(size_t i) override { return {rand({8}, kDouble), scalar_tensor(static_cast<int64_t>(i))}; }
    std::optional<size_t> size() const override { return 64; }
  };
  auto loader = make_data_loader(GlobalDraws().map(transforms::Stack<>()), DataLoaderOptions(4).workers(4));
  std::set<double> seen;
  size_t n = 0;
  for (auto& b : *loader) {
    auto d = values(b.data);
    seen.insert(d.begin(), d.end());
    n += d.size();
  }
  CHECK(n == 64 * 8);
  CHECK(seen.size() == n);
}

// ---- pytorch#21554: a dead worker must not hang the loader ------------------------------------
//
// PyTorch's workers are processes: one killed by a signal left the loader waiting forever for
// its batch. ember's workers are threads of the same process, so a worker cannot die alone
// (a crash takes the process); what can happen is that the worker's code throws (anything,
// not only std::exception) or stops making progress. The loader must raise in both cases.
// A worker stuck for ever in user code cannot be killed (threads cannot be): the loader
// raises its timeout error, and destroying the loader then waits for that worker's get()
// to return.

TEST_CASE("pytorch#21554: a worker throwing a non-std exception mid-epoch raises, never hangs") {
  struct ThrowsInt : datasets::Dataset<ThrowsInt> {
    Example<> get(size_t i) override {
      if (i == 21) throw 21;  // not a std::exception
      return {full({2}, static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i))};
    }
    std::optional<size_t> size() const override { return 40; }
  };
  auto start = std::chrono::steady_clock::now();
  auto loader =
      make_data_loader(ThrowsInt().map(transforms::Stack<>()), DataLoaderOptions(4).workers(3).shuffle(false));
  int batches = 0;
  std::string what;
  try {
    for (auto& b : *loader) {
      (void)b;
      ++batches;
    }
  } catch (const Error& e) {
    what = e.what();
  }
  CHECK(batches == 5);  // samples 0..19; the batch holding 21 fails
  CHECK(what.find("Caught exception in DataLoader worker process") != std::string::npos);
  CHECK(what.find("while loading sample 21: unknown exception") != std::string::npos);
  // The next epoch fails the same way, and the loader is destroyed without waiting.
  check_error([&] {
    for (auto& b : *loader) (void)b;
  }, "sample 21");
  loader.reset();
  CHECK(seconds_since(start) < 10.0);
}

TEST_CASE("pytorch#21554: a worker that stops making progress trips the timeout") {
  // Sample 9's get() blocks until the test releases it (after the loader has given up).
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
  };
  auto gate = std::make_shared<Gate>();
  struct Stuck : datasets::Dataset<Stuck> {
    std::shared_ptr<Gate> gate;
    Example<> get(size_t i) override {
      if (i == 9) {
        std::unique_lock<std::mutex> lock(gate->mu);
        gate->cv.wait_for(lock, std::chrono::seconds(30), [&] { return gate->open; });
      }
      return {full({1}, static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i))};
    }
    std::optional<size_t> size() const override { return 16; }
  };
  Stuck stuck;
  stuck.gate = gate;
  auto loader = make_data_loader(stuck.map(transforms::Stack<>()), DataLoaderOptions(2).workers(2).shuffle(false).timeout(
                                                                         std::chrono::milliseconds(500)));
  auto start = std::chrono::steady_clock::now();
  int batches = 0;
  check_error([&] {
    for (auto& b : *loader) {
      (void)b;
      ++batches;
    }
  }, "DataLoader timed out after 0.5 seconds");
  double waited = seconds_since(start);
  CHECK(batches == 4);  // samples 0..7
  CHECK(waited < 10.0);
  {
    std::lock_guard<std::mutex> lock(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  loader.reset();  // joins the released worker
  CHECK(seconds_since(start) < 15.0);
}

// ---- pytorch#33148: ranks with different batch counts in DDP --------------------------------

TEST_CASE("pytorch#33148: a rank running an extra DDP step gets the group's timeout error, not a hang") {
  if (ember::test::dist_ranks::skip_without_gloo()) return;
  // tests/dist/workers/ddp_worker.cpp, scenario uneven_inputs: 2-second group timeout; rank 1's
  // third backward has no partner and must raise within it. The deadline kills hung ranks.
  auto start = std::chrono::steady_clock::now();
  auto results = ember::test::dist_ranks::run_ranks("ddp", "uneven_inputs", 2, 2, std::chrono::seconds(60));
  ember::test::dist_ranks::expect_all_passed(results);
  CHECK(seconds_since(start) < 45.0);
}

// ---- pytorch#125224: generator state reuse --------------------------------------------------

namespace {
std::vector<uint8_t> cpu_state() {
  Generator& g = default_cpu_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  return g.get_state();
}
void set_cpu_state(const std::vector<uint8_t>& s) {
  Generator& g = default_cpu_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_state(s);
}
}  // namespace

TEST_CASE("pytorch#125224: consecutive draws never reuse the generator's state; restoring it replays") {
  manual_seed(125224);
  // Draws of odd sizes advance the state by exactly what they used: no overlap, no gap.
  Tensor r3 = rand({3}, kDouble), r5 = rand({5}, kDouble);
  manual_seed(125224);
  Tensor r8 = rand({8}, kDouble);
  CHECK(values(cat({r3, r5})) == values(r8));
  // Save, draw, restore: the same numbers again; the draw after that continues the stream.
  auto state = cpu_state();
  Tensor a = rand({100}, kDouble);
  Tensor i1 = randint(0, 1 << 30, {50});
  set_cpu_state(state);
  Tensor b = rand({100}, kDouble);
  CHECK(values(a) == values(b));
  CHECK(values(randint(0, 1 << 30, {50})) == values(i1));
  auto after = values(rand({100}, kDouble));
  auto first = values(a);
  std::set<double> both(first.begin(), first.end());
  both.insert(after.begin(), after.end());
  CHECK(both.size() == 200);
  check_error([] { set_cpu_state(std::vector<uint8_t>(15)); }, "RNG state must be 16 bytes");
}

TEST_CASE("pytorch#125224: threads drawing at once get disjoint numbers") {
  manual_seed(7);
  auto before = cpu_state();
  constexpr int kThreads = 4, kDraws = 25, kSize = 64;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&got, t] {
      for (int d = 0; d < kDraws; ++d) {
        auto v = values(rand({kSize}, kDouble));
        got[static_cast<size_t>(t)].insert(got[static_cast<size_t>(t)].end(), v.begin(), v.end());
      }
    });
  for (auto& th : threads) th.join();
  std::set<double> all;
  for (auto& g : got) all.insert(g.begin(), g.end());
  CHECK(all.size() == static_cast<size_t>(kThreads * kDraws * kSize));
  // Exactly kThreads * kDraws * kSize blocks were reserved: none lost to a race.
  auto now = cpu_state();
  uint64_t off_before = 0, off_now = 0;
  std::memcpy(&off_before, before.data() + 8, 8);
  std::memcpy(&off_now, now.data() + 8, 8);
  CHECK(off_now - off_before == static_cast<uint64_t>(kThreads * kDraws * kSize));
}
// The CUDA generator's case is in tests/cuda/test_big_tensors.cpp (run by scripts/gpu_check.sh).
