// DistributedSampler: the ranks' parts cover the dataset disjointly (padding repeats from the
// start, drop_last cuts the tail), every rank draws the same order for a (seed, epoch),
// set_epoch changes it, PyTorch's lengths and rank error, and use through a DataLoader.
#include <algorithm>
#include <map>
#include <numeric>

#include "ember/data/data.h"
#include "ember/data/samplers/distributed.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;
using samplers::DistributedSampler;

namespace {
std::vector<size_t> drain(samplers::Sampler<>& s, size_t bs = 3) {
  std::vector<size_t> all;
  while (auto b = s.next(bs)) all.insert(all.end(), b->begin(), b->end());
  return all;
}
/// Every rank's pass, for one (size, replicas, seed, epoch, shuffle, drop_last).
std::vector<std::vector<size_t>> all_ranks(size_t size, int64_t replicas, bool shuffle, bool drop_last,
                                           uint64_t seed = 0, uint64_t epoch = 0) {
  std::vector<std::vector<size_t>> parts;
  for (int64_t r = 0; r < replicas; ++r) {
    DistributedSampler s(size, replicas, r, shuffle, seed, drop_last);
    s.set_epoch(epoch);
    s.reset();
    parts.push_back(drain(s));
  }
  return parts;
}
/// The ranks' parts interleaved back into the order they strided through.
std::vector<size_t> interleave(const std::vector<std::vector<size_t>>& parts) {
  std::vector<size_t> out;
  for (size_t i = 0; i < parts[0].size(); ++i)
    for (const auto& p : parts) out.push_back(p[i]);
  return out;
}
}  // namespace

TEST_CASE("DistributedSampler: an evenly divisible dataset is covered once, disjointly") {
  for (bool shuffle : {false, true}) {
    auto parts = all_ranks(12, 3, shuffle, false, 7);
    std::vector<size_t> all;
    for (const auto& p : parts) {
      CHECK(p.size() == 4);
      all.insert(all.end(), p.begin(), p.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<size_t> expected(12);
    std::iota(expected.begin(), expected.end(), size_t{0});
    CHECK(all == expected);
  }
  // Without shuffling rank r gets r, r + R, r + 2R, ... (PyTorch's indices[rank::R]).
  auto parts = all_ranks(12, 3, false, false);
  CHECK(parts[1] == std::vector<size_t>{1, 4, 7, 10});
}

TEST_CASE("DistributedSampler: padding repeats the start; drop_last cuts the tail (PyTorch's lengths)") {
  // 10 examples on 4 ranks: ceil(10/4) = 3 each, total 12, the 2 extra are order[0], order[1].
  for (bool shuffle : {false, true}) {
    DistributedSampler s(10, 4, 0, shuffle, 3);
    CHECK(s.num_samples() == 3);
    CHECK(s.total_size() == 12);
    auto order = interleave(all_ranks(10, 4, shuffle, false, 3));
    REQUIRE(order.size() == 12);
    CHECK(order[10] == order[0]);
    CHECK(order[11] == order[1]);
    std::vector<size_t> head(order.begin(), order.begin() + 10);
    std::sort(head.begin(), head.end());
    for (size_t i = 0; i < 10; ++i) CHECK(head[i] == i);
  }
  // drop_last: ceil((10 - 4) / 4) = 2 each, total 8, two examples dropped, none repeated.
  {
    DistributedSampler s(10, 4, 2, true, 3, true);
    CHECK(s.num_samples() == 2);
    CHECK(s.total_size() == 8);
    auto order = interleave(all_ranks(10, 4, true, true, 3));
    CHECK(order.size() == 8);
    std::vector<size_t> u = order;
    std::sort(u.begin(), u.end());
    CHECK(std::unique(u.begin(), u.end()) == u.end());
    auto plain = interleave(all_ranks(10, 4, false, true));
    CHECK(plain == std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7});
  }
  // Fewer examples than ranks: padding wraps around the dataset more than once.
  auto parts = all_ranks(2, 5, false, false);
  CHECK(interleave(parts) == std::vector<size_t>{0, 1, 0, 1, 0});
  CHECK(DistributedSampler(2, 5, 0, true, 0, true).num_samples() == 0);
  CHECK(drain(*std::make_shared<DistributedSampler>(0, 2, 1)).empty());
}

TEST_CASE("DistributedSampler: same seed and epoch, same order on every rank; set_epoch changes it") {
  auto e0 = interleave(all_ranks(50, 2, true, false, 11, 0));
  CHECK(e0 == interleave(all_ranks(50, 2, true, false, 11, 0)));
  auto e1 = interleave(all_ranks(50, 2, true, false, 11, 1));
  CHECK(e1 != e0);
  std::vector<size_t> sorted0 = e0, sorted1 = e1;
  std::sort(sorted0.begin(), sorted0.end());
  std::sort(sorted1.begin(), sorted1.end());
  CHECK(sorted0 == sorted1);
  CHECK(interleave(all_ranks(50, 2, true, false, 12, 0)) != e0);  // another seed
  // reset() alone does not advance the epoch (PyTorch: set_epoch is the caller's job).
  DistributedSampler s(50, 2, 0, true, 11);
  auto first = drain(s);
  s.reset();
  CHECK(drain(s) == first);
  s.set_epoch(1);
  s.reset();
  CHECK(drain(s) != first);
  CHECK(s.epoch() == 1);
  // seed + epoch is the key, as PyTorch's generator.manual_seed(seed + epoch).
  DistributedSampler a(50, 2, 1, true, 11), b(50, 2, 1, true, 10);
  a.set_epoch(3);
  b.set_epoch(4);
  a.reset();
  b.reset();
  CHECK(drain(a) == drain(b));
}

TEST_CASE("DistributedSampler: PyTorch's rank error") {
  check_error([] { DistributedSampler(10, 2, 3); }, "Invalid rank 3, rank should be in the interval [0, 1]");
  check_error([] { DistributedSampler(10, 2, -1); },
              "Invalid rank -1, rank should be in the interval [0, 1]");
}

TEST_CASE("DistributedSampler: through a DataLoader, each rank loads its part, a new order per epoch") {
  auto x = arange(20, TensorOptions().dtype(kFloat)).reshape({20, 1});
  std::map<int64_t, int> seen;
  std::vector<std::vector<float>> epoch_orders(2);
  for (int64_t rank = 0; rank < 2; ++rank) {
    auto sampler = std::make_shared<DistributedSampler>(20, 2, rank, true, 5);
    auto loader = make_data_loader(datasets::TensorDataset(x, arange(20, kLong)).map(transforms::Stack<>()),
                                   DataLoaderOptions().batch_size(4).sampler(sampler));
    for (int epoch = 0; epoch < 2; ++epoch) {
      int64_t n = 0;
      for (auto& batch : *loader) {
        n += batch.data.size(0);
        for (int64_t i = 0; i < batch.data.size(0); ++i) {
          float v = batch.data[i][0].item<float>();
          if (epoch == 0) ++seen[static_cast<int64_t>(v)];
          if (rank == 0) epoch_orders[static_cast<size_t>(epoch)].push_back(v);
        }
      }
      CHECK(n == 10);
    }
  }
  CHECK(seen.size() == 20);
  for (auto& [k, c] : seen) CHECK(c == 1);
  CHECK(epoch_orders[0] != epoch_orders[1]);  // the loader's set_epoch reached the sampler
}
