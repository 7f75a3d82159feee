// DataLoader: batch shapes and order, the same batch sequence for 0, 1 and 3 workers with one
// seed, reshuffling per epoch, drop_last, early break, worker errors naming the sample,
// timeouts and the pin_memory warning.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <sstream>
#include <thread>

#include "ember/data/dataloader.h"
#include "ember/data/datasets/tensor.h"
#include "ember/data/samplers/batch.h"
#include "ember/data/transforms/lambda.h"
#include "ember/data/transforms/stack.h"
#include "ember/data/transforms/tensor.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;
using ember::test::shape;
using ember::test::values;

namespace {
/// Row i: data (i) as float32 (1-d row of one element), target i.
auto rows(int64_t n) { return datasets::TensorDataset(arange(n, kFloat).view({n, 1}), arange(n, kLong)); }
auto stacked(int64_t n) { return rows(n).map(transforms::Stack<>()); }

/// The targets of every batch of one epoch, batch by batch.
template <class Loader>
std::vector<std::vector<double>> epoch(Loader& loader) {
  std::vector<std::vector<double>> out;
  for (auto& batch : loader) out.push_back(values(batch.target));
  return out;
}
std::vector<double> flat(const std::vector<std::vector<double>>& v) {
  std::vector<double> f;
  for (auto& b : v) f.insert(f.end(), b.begin(), b.end());
  return f;
}
std::vector<double> range(int n) {
  std::vector<double> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0.0);
  return r;
}

/// A dataset whose get(17) throws, for the error path.
struct Faulty : datasets::Dataset<Faulty> {
  Example<> get(size_t i) override {
    EMBER_CHECK(i != 17, "sample ", i, " is corrupt");
    return {full({2}, static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i))};
  }
  std::optional<size_t> size() const override { return 40; }
};

/// A dataset that takes its time, for timeouts and early breaks.
struct Slow : datasets::Dataset<Slow> {
  int delay_ms = 50;
  Example<> get(size_t i) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    return {full({1}, static_cast<double>(i)), scalar_tensor(static_cast<int64_t>(i))};
  }
  std::optional<size_t> size() const override { return 64; }
};
}  // namespace

TEST_CASE("test_dataloader: sequential batches, shapes and drop_last") {
  auto loader = make_data_loader(stacked(100), DataLoaderOptions().batch_size(32).shuffle(false));
  std::vector<int64_t> sizes;
  std::vector<double> seen;
  for (auto& batch : *loader) {
    sizes.push_back(batch.data.size(0));
    CHECK(shape(batch.data) == std::vector<int64_t>{batch.data.size(0), 1});
    CHECK(batch.data.dtype() == kFloat);
    CHECK(batch.target.dtype() == kLong);
    auto t = values(batch.target);
    seen.insert(seen.end(), t.begin(), t.end());
  }
  CHECK(sizes == std::vector<int64_t>{32, 32, 32, 4});
  CHECK(seen == range(100));

  auto dropping =
      make_data_loader(stacked(100), DataLoaderOptions().batch_size(32).shuffle(false).drop_last(true));
  CHECK(epoch(*dropping).size() == 3);
  // libtorch's template form and an explicit sampler object give the same order.
  auto seq_loader = make_data_loader<samplers::SequentialSampler>(stacked(10), DataLoaderOptions(4));
  CHECK(flat(epoch(*seq_loader)) == range(10));
  auto with_sampler = make_data_loader(stacked(10), samplers::SequentialSampler(10), DataLoaderOptions(4));
  CHECK(flat(epoch(*with_sampler)) == range(10));
  // Without Stack a batch is a vector of examples.
  auto raw = make_data_loader(rows(5), DataLoaderOptions(2).shuffle(false));
  auto it = raw->begin();
  REQUIRE(it != raw->end());
  CHECK(it->size() == 2);
  CHECK((*it)[1].target.item<int64_t>() == 1);
  check_error([] { make_data_loader(stacked(4), DataLoaderOptions(0)); },
              "batch_size should be a positive integer");
}

TEST_CASE("test_dataloader: one seed gives the same batches for 0, 1 and 3 workers") {
  // Shuffled, with random transforms, so both the sampler and the per-sample streams count.
  auto pipeline = [] {
    return datasets::TensorDataset(arange(64 * 16, kFloat).view({64, 1, 4, 4}), arange(64, kLong))
        .map(transforms::RandomCrop<>(4, 1))
        .map(transforms::RandomHorizontalFlip<>())
        .map(transforms::Stack<>());
  };
  std::vector<std::vector<double>> data0, targets0;
  for (size_t workers : {0, 1, 3}) {
    auto loader = make_data_loader(pipeline(), DataLoaderOptions().batch_size(5).workers(workers).seed(1234));
    std::vector<std::vector<double>> data, targets;
    for (int e = 0; e < 2; ++e)
      for (auto& b : *loader) {
        data.push_back(values(b.data));
        targets.push_back(values(b.target));
      }
    INFO("workers = " << workers);
    if (workers == 0) {
      data0 = data;
      targets0 = targets;
      REQUIRE(targets.size() == 26);  // 13 batches per epoch, 2 epochs
    } else {
      CHECK(targets == targets0);
      CHECK(data == data0);
    }
  }
  // Each epoch covers every sample once, in a shuffled order that differs per epoch.
  std::vector<double> e0, e1;
  for (size_t b = 0; b < 13; ++b) {
    e0.insert(e0.end(), targets0[b].begin(), targets0[b].end());
    e1.insert(e1.end(), targets0[13 + b].begin(), targets0[13 + b].end());
  }
  CHECK(e0 != range(64));
  CHECK(e0 != e1);
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  CHECK(e0 == range(64));
  CHECK(e1 == range(64));
  // Another seed shuffles differently.
  auto other = make_data_loader(pipeline(), DataLoaderOptions().batch_size(5).seed(99));
  CHECK(epoch(*other) != std::vector<std::vector<double>>(targets0.begin(), targets0.begin() + 13));
}

TEST_CASE("test_dataloader: epochs reshuffle; set_epoch replays one") {
  auto loader = make_data_loader(stacked(20), DataLoaderOptions().batch_size(20).seed(3).workers(2));
  auto a = epoch(*loader);
  CHECK(loader->epoch() == 0);
  auto b = epoch(*loader);
  CHECK(loader->epoch() == 1);
  CHECK(a != b);
  loader->set_epoch(0);
  CHECK(epoch(*loader) == a);
  CHECK(epoch(*loader) == b);
  // Default (shuffle unset) is libtorch's: random order.
  auto dflt = make_data_loader(stacked(20), DataLoaderOptions(20).seed(3));
  CHECK(flat(epoch(*dflt)) != range(20));
  // Unordered delivery still yields every batch once.
  auto unordered =
      make_data_loader(stacked(50), DataLoaderOptions(4).workers(3).enforce_ordering(false).shuffle(false));
  std::vector<double> all = flat(epoch(*unordered));
  std::sort(all.begin(), all.end());
  CHECK(all == range(50));
}

TEST_CASE("test_dataloader: early break and restart do not hang") {
  Slow slow;
  slow.delay_ms = 5;
  {
    auto loader =
        make_data_loader(slow.map(transforms::Stack<>()), DataLoaderOptions(4).workers(3).shuffle(false));
    for (auto& b : *loader) {
      CHECK(values(b.target) == std::vector<double>{0, 1, 2, 3});
      break;
    }
    // A new epoch after a break starts from the beginning and runs to the end.
    CHECK(flat(epoch(*loader)) == range(64));
    auto it = loader->begin();  // break again with batches in flight, then destroy
    CHECK(it != loader->end());
  }
  CHECK(true);  // reached: the destructor joined the workers
}

TEST_CASE("test_dataloader: a worker's exception names the sample") {
  for (size_t workers : {0, 1, 3}) {
    INFO("workers = " << workers);
    auto loader = make_data_loader(Faulty().map(transforms::Stack<>()),
                                   DataLoaderOptions(8).workers(workers).shuffle(false));
    std::string what;
    int batches = 0;
    try {
      for (auto& b : *loader) {
        (void)b;
        ++batches;
      }
    } catch (const Error& e) {
      what = e.what();
    }
    CHECK(batches == 2);  // samples 0..15 load; the batch with 17 fails
    CHECK(what.find("while loading sample 17: sample 17 is corrupt") != std::string::npos);
    if (workers == 0)
      CHECK(what.find("Caught Error in DataLoader main process") != std::string::npos);
    else
      CHECK(what.find("Caught Error in DataLoader worker process ") != std::string::npos);
    // The loader is usable again: the next epoch fails at the same place.
    check_error([&] { epoch(*loader); }, "sample 17");
  }
  // Thrown inside a transform: the index of the sample being transformed.
  auto bad_transform = stacked(30)
                           .dataset()  // the TensorDataset under Stack
                           .map(transforms::Lambda<>([](Example<> e) {
                             EMBER_CHECK(e.target.item<int64_t>() != 22, "cannot transform");
                             return e;
                           }))
                           .map(transforms::Stack<>());
  auto loader = make_data_loader(bad_transform, DataLoaderOptions(5).workers(2).shuffle(false));
  check_error([&] { epoch(*loader); }, "while loading sample 22: cannot transform");
}

TEST_CASE("test_dataloader: timeout") {
  Slow slow;
  slow.delay_ms = 300;
  auto loader =
      make_data_loader(slow.map(transforms::Stack<>()),
                       DataLoaderOptions(1).workers(1).max_jobs(1).timeout(std::chrono::milliseconds(10)));
  check_error([&] { loader->begin(); }, "DataLoader timed out after 0.01 seconds");
}

TEST_CASE("test_dataloader: pin_memory without a device warns once") {
  if (cuda::is_available()) {
    MESSAGE("CUDA is available: the no-accelerator warning does not apply");
    return;
  }
  data::detail::reset_pin_memory_warning();
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  auto a = make_data_loader(stacked(8), DataLoaderOptions(4).pin_memory(true));
  auto b = make_data_loader(stacked(8), DataLoaderOptions(4).pin_memory(true));
  std::cerr.rdbuf(old);
  std::string text = captured.str();
  const std::string warning =
      "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be "
      "used.";
  CHECK(text.find(warning) != std::string::npos);
  CHECK(text.find(warning) == text.rfind(warning));  // once
  CHECK(epoch(*a).size() == 2);                      // and loading goes on
}

TEST_CASE("test_dataloader: BatchSampler as the sampler") {
  auto sampler = std::make_shared<samplers::BatchSampler>(samplers::SequentialSampler(10), 4, true);
  auto loader = make_data_loader(stacked(10), DataLoaderOptions(4).sampler(sampler).workers(1));
  auto batches = epoch(*loader);
  REQUIRE(batches.size() == 2);
  CHECK(batches[1] == std::vector<double>{4, 5, 6, 7});
}
