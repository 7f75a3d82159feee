// The data classes as libtorch declares them, used as a libtorch user does: subclasses written
// against libtorch's virtual signatures (a Sampler with save/load, a StreamDataset, a
// StatefulDataset, a ChunkDataReader, a Collation) must compile unchanged and behave as
// libtorch's. Also the samplers' archive round trips, DistributedRandom/SequentialSampler,
// StreamSampler, SharedBatchDataset, ChunkDataset (order, every example exactly once with
// several preloaders and workers, back-pressure, errors, checkpoints) and the loader types.
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/core/archive.h"
#include "ember/data/data.h"
#include "op_check.h"
#include "temp_dir.h"

namespace torch = ember;  // what a libtorch program says once (or gets from <torch/torch.h>)

using ember::test::check_error;
using ember::test::values;

namespace {

// ---- user code, spelled as for libtorch -------------------------------------------------------

/// Every other index, in order: a user sampler with libtorch's full set of overrides.
class EvenSampler : public torch::data::samplers::Sampler<> {
 public:
  explicit EvenSampler(size_t size) : size_(size) {}
  void reset(torch::optional<size_t> new_size = torch::nullopt) override {
    if (new_size) size_ = *new_size;
    next_ = 0;
  }
  torch::optional<std::vector<size_t>> next(size_t batch_size) override {
    std::vector<size_t> batch;
    while (batch.size() < batch_size && next_ < size_) {
      batch.push_back(next_);
      next_ += 2;
    }
    if (batch.empty()) return torch::nullopt;
    return batch;
  }
  void save(torch::serialize::OutputArchive& archive) const override {
    archive.write("next", torch::tensor(static_cast<int64_t>(next_)), /*is_buffer=*/true);
  }
  void load(torch::serialize::InputArchive& archive) override {
    auto t = torch::empty(1, torch::kInt64);
    archive.read("next", t, /*is_buffer=*/true);
    next_ = static_cast<size_t>(t.item<int64_t>());
  }

 private:
  size_t size_, next_ = 0;
};

/// Rows i: data (i), target i.
class Rows : public torch::data::Dataset<Rows> {
 public:
  explicit Rows(int64_t n) : n_(n) {}
  torch::data::Example<> get(size_t index) override {
    auto i = static_cast<int64_t>(index);
    return {torch::full({1}, static_cast<double>(i)), torch::tensor(i)};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(n_); }

 private:
  int64_t n_;
};

/// A stream of consecutive integers: each request is a count.
class Counter : public torch::data::datasets::StreamDataset<Counter, std::vector<int64_t>> {
 public:
  std::vector<int64_t> get_batch(size_t batch_size) override {
    std::vector<int64_t> out(batch_size);
    std::iota(out.begin(), out.end(), next_);
    next_ += static_cast<int64_t>(batch_size);
    return out;
  }
  torch::optional<size_t> size() const override { return torch::nullopt; }

 private:
  int64_t next_ = 0;
};

/// A reader over `total` numbers that keeps its place (thread-safe, as a StatefulDataLoader
/// with workers requires).
class Countdown : public torch::data::datasets::StatefulDataset<Countdown, std::vector<int64_t>> {
 public:
  explicit Countdown(int64_t total) : total_(total) {}
  Countdown(const Countdown& other) : total_(other.total_), next_(other.next_) {}
  torch::optional<std::vector<int64_t>> get_batch(size_t batch_size) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (next_ >= total_) return torch::nullopt;
    std::vector<int64_t> out;
    while (out.size() < batch_size && next_ < total_) out.push_back(next_++);
    return out;
  }
  torch::optional<size_t> size() const override { return torch::nullopt; }
  void reset() override {
    std::lock_guard<std::mutex> lock(mu_);
    next_ = 0;
  }
  void save(torch::serialize::OutputArchive& archive) const override {
    archive.write("next", torch::tensor(next_), /*is_buffer=*/true);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::Tensor t;
    archive.read("next", t, /*is_buffer=*/true);
    next_ = t.item<int64_t>();
  }

 private:
  int64_t total_, next_ = 0;
  std::mutex mu_;
};

/// Chunk c holds the c + 1 numbers 100 c, 100 c + 1, ...; reads are counted.
class Chunks : public torch::data::datasets::ChunkDataReader<int64_t> {
 public:
  using BatchType = torch::data::datasets::ChunkDataReader<int64_t>::ChunkType;
  explicit Chunks(size_t count, int64_t fail_chunk = -1) : count_(count), fail_chunk_(fail_chunk) {}
  Chunks(const Chunks& other) : count_(other.count_), fail_chunk_(other.fail_chunk_) {}
  BatchType read_chunk(size_t chunk_index) override {
    reads_++;
    if (static_cast<int64_t>(chunk_index) == fail_chunk_) throw std::runtime_error("chunk file is corrupt");
    BatchType out;
    for (size_t j = 0; j <= chunk_index; ++j) out.push_back(static_cast<int64_t>(100 * chunk_index + j));
    return out;
  }
  size_t chunk_count() override { return count_; }
  void reset() override {}
  std::atomic<int> reads_{0};

 private:
  size_t count_;
  int64_t fail_chunk_;
};

/// Sums each batch's data into one example (a Collation in libtorch's parameter order).
struct SumCollate : public torch::data::transforms::Collation<torch::data::Example<>> {
  torch::data::Example<> apply_batch(std::vector<torch::data::Example<>> examples) override {
    torch::Tensor data = torch::zeros({1}), target = torch::tensor(int64_t{0});
    for (auto& e : examples) {
      data = data.add(e.data);
      target = target.add(e.target);
    }
    return {data, target};
  }
};

std::vector<int64_t> all_of(std::vector<std::vector<int64_t>> batches) {
  std::vector<int64_t> out;
  for (auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

/// Every number the Chunks reader holds for `count` chunks, sorted.
std::vector<int64_t> chunk_numbers(size_t count) {
  std::vector<int64_t> out;
  for (size_t c = 0; c < count; ++c)
    for (size_t j = 0; j <= c; ++j) out.push_back(static_cast<int64_t>(100 * c + j));
  return out;
}

template <class Sampler>
std::vector<size_t> drain(Sampler& s, size_t batch = 3) {
  std::vector<size_t> out;
  while (auto b = s.next(batch)) out.insert(out.end(), b->begin(), b->end());
  return out;
}

using torch::data::samplers::SequentialSampler;
using ChunkSet = torch::data::datasets::ChunkDataset<Chunks, SequentialSampler, SequentialSampler>;
using RandomChunkSet = torch::data::datasets::ChunkDataset<Chunks>;

}  // namespace

TEST_CASE("a user's Sampler with libtorch's overrides drives a loader and checkpoints") {
  EvenSampler sampler(10);
  std::unique_ptr<torch::data::StatelessDataLoader<decltype(Rows(10).map(torch::data::transforms::Stack<>())),
                                                   EvenSampler>>
      loader = torch::data::make_data_loader(Rows(10).map(torch::data::transforms::Stack<>()), sampler,
                                             torch::data::DataLoaderOptions(2));
  std::vector<double> seen;
  for (auto& batch : *loader)
    for (double v : values(batch.target)) seen.push_back(v);
  CHECK(seen == std::vector<double>{0, 2, 4, 6, 8});

  sampler.reset();
  sampler.next(2);  // 0, 2
  torch::serialize::OutputArchive out;
  out << sampler;
  EvenSampler restored(10);
  torch::serialize::InputArchive in;
  std::ostringstream bytes;
  out.save_to(bytes);
  std::istringstream read(bytes.str());
  in.load_from(read);
  in >> restored;
  CHECK(drain(restored, 2) == std::vector<size_t>{4, 6, 8});
}

TEST_CASE("ember's samplers continue a pass after torch::save / torch::load") {
  ember::test::TempDir dir;
  std::string path = dir / "sampler.pt";
  {
    torch::data::samplers::RandomSampler a(20, /*seed=*/7);
    a.next(5);
    torch::save(a, path);
    std::vector<size_t> rest = drain(a);
    a.reset();
    std::vector<size_t> next_epoch = drain(a);
    torch::data::samplers::RandomSampler b(20, /*seed=*/99);
    torch::load(b, path);
    CHECK(drain(b) == rest);
    b.reset();
    CHECK(drain(b) == next_epoch);  // seed and epoch travel too
  }
  {
    torch::data::samplers::SequentialSampler a(7);
    a.next(4);
    torch::save(a, path);
    torch::data::samplers::SequentialSampler b(7);
    torch::load(b, path);
    CHECK(drain(b) == std::vector<size_t>{4, 5, 6});
  }
  {
    torch::data::samplers::BatchSampler a(torch::data::samplers::SequentialSampler(9), 4, false);
    a.next();
    torch::save(a, path);
    torch::data::samplers::BatchSampler b(torch::data::samplers::SequentialSampler(9), 4, false);
    torch::load(b, path);
    CHECK(*b.next() == std::vector<size_t>{4, 5, 6, 7});
  }
  {
    torch::data::samplers::StreamSampler a(10);
    a.next(4);
    torch::save(a, path);
    torch::data::samplers::StreamSampler b(10);
    torch::load(b, path);
    CHECK(b.next(4)->size() == 4);
    CHECK(b.next(4)->size() == 2);
    CHECK(!b.next(4));
  }
  // A damaged archive is an error, not a wild index.
  torch::serialize::OutputArchive bad;
  bad.write("index", int64_t{50});
  bad.write("size", int64_t{7});
  bad.save_to(path);
  torch::data::samplers::SequentialSampler c(7);
  check_error([&] { torch::load(c, path); }, "SequentialSampler: the archive's index 50 is past the end");
  check_error([&] { torch::data::samplers::RandomSampler r(3, 1); torch::load(r, path); },
              "No such serialized tensor 'indices'");
}

TEST_CASE("DistributedSequentialSampler and DistributedRandomSampler split as libtorch's") {
  using torch::data::samplers::DistributedRandomSampler;
  using torch::data::samplers::DistributedSequentialSampler;
  // 10 examples on 3 ranks: ceil(10 / 3) = 4 each, the list wrapped around to 12.
  std::vector<std::vector<size_t>> sequential;
  for (size_t r = 0; r < 3; ++r) {
    DistributedSequentialSampler s(10, 3, r);
    sequential.push_back(drain(s));
  }
  CHECK(sequential[0] == std::vector<size_t>{0, 1, 2, 3});
  CHECK(sequential[1] == std::vector<size_t>{4, 5, 6, 7});
  CHECK(sequential[2] == std::vector<size_t>{8, 9, 0, 1});
  DistributedSequentialSampler no_dup(10, 3, 2, /*allow_duplicates=*/false);
  CHECK(drain(no_dup) == std::vector<size_t>{6, 7, 8});

  for (size_t epoch : {0, 3}) {
    // The whole padded list shuffled by std::mt19937(epoch), each rank a slice of it.
    std::vector<size_t> all(10);
    std::iota(all.begin(), all.end(), size_t{0});
    all.push_back(0);
    all.push_back(1);
    std::mt19937 rand(static_cast<std::mt19937::result_type>(epoch));
    std::shuffle(all.begin(), all.end(), rand);
    std::multiset<size_t> covered;
    for (size_t r = 0; r < 3; ++r) {
      DistributedRandomSampler s(10, 3, r);
      s.set_epoch(epoch);
      s.reset();
      std::vector<size_t> got = drain(s);
      CHECK(got == std::vector<size_t>(all.begin() + 4 * r, all.begin() + 4 * (r + 1)));
      covered.insert(got.begin(), got.end());
    }
    for (size_t i = 0; i < 10; ++i) CHECK(covered.count(i) >= 1);
  }
  DistributedRandomSampler s(10, 3, 1);
  s.set_epoch(5);
  s.reset();
  s.next(3);
  torch::serialize::OutputArchive out;
  out << s;
  std::vector<size_t> rest = drain(s);
  std::ostringstream bytes;
  out.save_to(bytes);
  std::istringstream read(bytes.str());
  torch::serialize::InputArchive in;
  in.load_from(read);
  DistributedRandomSampler t(10, 3, 1);
  in >> t;
  CHECK(t.epoch() == 5);
  CHECK(drain(t) == rest);
  check_error([] { DistributedRandomSampler(10, 2, 2); }, "Invalid rank 2, rank should be in the interval [0, 1]");
}

TEST_CASE("a StreamDataset with a StreamSampler gets counts, the last one cut to the epoch") {
  auto loader = torch::data::make_data_loader(Counter(), torch::data::samplers::StreamSampler(/*epoch_size=*/10),
                                              torch::data::DataLoaderOptions(4));
  std::unique_ptr<torch::data::StatelessDataLoader<Counter, torch::data::samplers::StreamSampler>> same =
      std::move(loader);
  std::vector<size_t> sizes;
  std::vector<std::vector<int64_t>> batches;
  for (auto& batch : *same) {
    sizes.push_back(batch.size());
    batches.push_back(batch);
  }
  CHECK(sizes == std::vector<size_t>{4, 4, 2});
  std::vector<int64_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(all_of(batches) == expected);
}

TEST_CASE("a user's StatefulDataset runs under StatefulDataLoader until it answers nullopt") {
  static_assert(Countdown::is_stateful);
  static_assert(!Rows::is_stateful);
  for (size_t workers : {0, 2}) {
    CAPTURE(workers);
    std::unique_ptr<torch::data::StatefulDataLoader<Countdown>> loader =
        torch::data::make_data_loader(Countdown(11), torch::data::DataLoaderOptions(3).workers(workers));
    for (int epoch = 0; epoch < 2; ++epoch) {  // each epoch resets the dataset
      std::vector<std::vector<int64_t>> batches;
      for (auto& batch : *loader) batches.push_back(batch);
      std::vector<int64_t> got = all_of(batches);
      std::sort(got.begin(), got.end());
      std::vector<int64_t> expected(11);
      std::iota(expected.begin(), expected.end(), 0);
      CHECK(got == expected);
      if (workers == 0) CHECK(batches.size() == 4);
    }
  }
  Countdown a(5);
  a.get_batch(2);
  torch::serialize::OutputArchive out;
  out << a;
  std::ostringstream bytes;
  out.save_to(bytes);
  std::istringstream read(bytes.str());
  torch::serialize::InputArchive in;
  in.load_from(read);
  Countdown b(5);
  in >> b;
  CHECK(*b.get_batch(5) == std::vector<int64_t>{2, 3, 4});
}

TEST_CASE("SharedBatchDataset: every worker reads the one dataset") {
  struct Counting : torch::data::Dataset<Counting> {
    std::atomic<int> calls{0};
    torch::data::Example<> get(size_t i) override {
      calls++;
      return {torch::full({1}, static_cast<double>(i)), torch::tensor(static_cast<int64_t>(i))};
    }
    torch::optional<size_t> size() const override { return 12; }
  };
  auto shared = torch::data::datasets::make_shared_dataset<Counting>();
  auto loader = torch::data::make_data_loader<SequentialSampler>(shared, torch::data::DataLoaderOptions(4).workers(3));
  size_t examples = 0;
  for (auto& batch : *loader) examples += batch.size();
  CHECK(examples == 12);
  CHECK(shared->calls == 12);  // the workers' copies share the dataset
  CHECK((*shared).size() == 12u);
}

TEST_CASE("a user's Collation reduces each batch to one example") {
  auto loader = torch::data::make_data_loader<SequentialSampler>(Rows(6).map(SumCollate()),
                                                                 torch::data::DataLoaderOptions(3));
  std::vector<double> sums;
  for (auto& batch : *loader) sums.push_back(values(batch.data)[0]);
  CHECK(sums == std::vector<double>{0 + 1 + 2, 3 + 4 + 5});
}

TEST_CASE("ChunkDataset with sequential samplers and one preloader reads chunk after chunk") {
  auto dataset = torch::data::datasets::make_shared_dataset<ChunkSet>(
      Chunks(4), SequentialSampler(0), SequentialSampler(0), torch::data::datasets::ChunkDatasetOptions(1, 3));
  auto loader = torch::data::make_data_loader(dataset, torch::data::DataLoaderOptions(3));
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::vector<int64_t>> batches;
    for (auto& batch : *loader) batches.push_back(batch);
    CHECK(all_of(batches) == chunk_numbers(4));
    for (auto& b : batches) CHECK(b.size() <= 3);
  }
}

TEST_CASE("ChunkDataset hands out every example once with several preloaders and workers") {
  for (size_t preloaders : {1, 3}) {
    for (size_t workers : {0, 2}) {
      for (size_t cross : {1, 2}) {
        CAPTURE(preloaders);
        CAPTURE(workers);
        CAPTURE(cross);
        // cache_size 4: the preloaders must wait for the consumer.
        auto dataset = torch::data::datasets::make_shared_dataset<RandomChunkSet>(
            Chunks(7), torch::data::samplers::RandomSampler(0), torch::data::samplers::RandomSampler(0),
            torch::data::datasets::ChunkDatasetOptions(preloaders, 2, /*cache_size=*/4, cross));
        auto loader = torch::data::make_data_loader(dataset, torch::data::DataLoaderOptions(2).workers(workers));
        std::vector<std::vector<int64_t>> batches;
        for (auto& batch : *loader) batches.push_back(batch);
        std::vector<int64_t> got = all_of(batches);
        std::sort(got.begin(), got.end());
        CHECK(got == chunk_numbers(7));
      }
    }
  }
}

TEST_CASE("ChunkDataset: errors, a reader's exception, and resuming from a checkpoint") {
  using Options = torch::data::datasets::ChunkDatasetOptions;
  check_error([] { Options(0, 2); }, "Preloader count is 0. At least one preloader needs to be specified.");
  check_error([] { Options(1, 0); }, "Batch size is 0. A positive batch size needs to be specified.");
  check_error([] { Options(1, 4, 2); }, "Cache size is less than batch size.");
  check_error([] { Options(1, 2, 8, 0); }, "cross_chunk_shuffle_count needs to be greater than 0.");

  ChunkSet direct(Chunks(3), SequentialSampler(0), SequentialSampler(0), Options(1, 2));
  check_error([&] { direct.get_batch(2); }, "Dataset needs to call reset() before calling get_batch().");
  direct.reset();
  check_error([&] { direct.get_batch(3); }, "The requested batch size does not match");
  // Chunk 0's lone example may leave before chunk 1 tops its batch up: the boundaries depend on
  // timing (as libtorch's), the order does not.
  std::vector<int64_t> epoch;
  while (auto batch = direct.get_batch()) epoch.insert(epoch.end(), batch->begin(), batch->end());
  CHECK(epoch == chunk_numbers(3));

  auto failing = torch::data::datasets::make_shared_dataset<ChunkSet>(Chunks(4, /*fail_chunk=*/2), SequentialSampler(0),
                                                                       SequentialSampler(0), Options(1, 2));
  auto loader = torch::data::make_data_loader(failing, torch::data::DataLoaderOptions(2));
  check_error([&] {
    for (auto& batch : *loader) (void)batch;
  }, "chunk file is corrupt");

  // Checkpoint after the first chunk group; a new dataset resumes from the second chunk.
  // cache_size 1: the preloader cannot run more than a chunk ahead of the consumer.
  ChunkSet first(Chunks(4), SequentialSampler(0), SequentialSampler(0), Options(1, 1, /*cache_size=*/1));
  first.reset();
  CHECK(*first.get_batch() == std::vector<int64_t>{0});
  torch::serialize::OutputArchive out;
  out << first;
  ember::test::TempDir dir;
  out.save_to(dir / "chunks.pt");
  torch::serialize::InputArchive in;
  in.load_from(dir / "chunks.pt");
  ChunkSet resumed(Chunks(4), SequentialSampler(0), SequentialSampler(0), Options(1, 1, /*cache_size=*/1));
  in >> resumed;
  resumed.reset();  // keeps the loaded position
  std::vector<int64_t> rest;
  while (auto b = resumed.get_batch()) rest.insert(rest.end(), b->begin(), b->end());
  // The saved sampler had handed out chunk 0 and (preloading ahead) maybe chunk 1 already.
  std::vector<int64_t> all = chunk_numbers(4);
  CHECK(!rest.empty());
  CHECK(std::equal(rest.rbegin(), rest.rend(), all.rbegin()));
  CHECK(rest.size() < all.size());
}

TEST_CASE("DataLoaderOptions has libtorch's fields") {
  auto o = torch::data::DataLoaderOptions(8)
               .workers(2)
               .max_jobs(3)
               .timeout(std::chrono::milliseconds(500))
               .enforce_ordering(false)
               .drop_last(true);
  CHECK(o.batch_size() == 8);
  CHECK(*o.max_jobs() == 3);
  CHECK(o.timeout()->count() == 500);
  CHECK(!o.enforce_ordering());
}
