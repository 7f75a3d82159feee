// Datasets and transforms: TensorDataset, Subset, ConcatDataset, random_split, .map() with
// Stack / Normalize / Lambda, and the seeded random crop/flip (values against hand-worked
// numbers or a reference crop of an explicitly padded tensor).
#include <algorithm>
#include <numeric>
#include <set>

#include "ember/data/datasets/base.h"
#include "ember/data/datasets/concat.h"
#include "ember/data/datasets/map.h"
#include "ember/data/datasets/subset.h"
#include "ember/data/datasets/tensor.h"
#include "ember/data/transforms/lambda.h"
#include "ember/data/transforms/stack.h"
#include "ember/data/transforms/tensor.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::longs;
using ember::test::seq;
using ember::test::shape;
using ember::test::values;

namespace {
/// Rows i -> data (2i, 2i + 1), target i.
datasets::TensorDataset five_rows() { return datasets::TensorDataset(seq({5, 2}), arange(5, kLong)); }

std::vector<size_t> sorted(std::vector<size_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST_CASE("test_datasets: TensorDataset rows and size") {
  auto ds = five_rows();
  CHECK(ds.size() == std::optional<size_t>(5));
  Example<> e = ds.get(3);
  check_close(e.data, {6, 7});
  CHECK(e.target.item<int64_t>() == 3);
  std::vector<Example<>> batch = ds.get_batch(std::vector<size_t>{4, 0});
  REQUIRE(batch.size() == 2);
  check_close(batch[0].data, {8, 9});
  check_close(batch[1].data, {0, 1});
  // libtorch's one-tensor form: no target.
  datasets::TensorDataset only(seq({3, 2}));
  CHECK_FALSE(only.get(1).target.defined());
  check_error(
      [] {
        datasets::TensorDataset(seq({5, 2}), arange(4, kLong));
      },
      "Size mismatch between tensors");
  check_error([] { datasets::TensorDataset(scalar_tensor(1.0), scalar_tensor(1.0)); },
              "at least one dimension");
}

TEST_CASE("test_datasets: Subset and ConcatDataset") {
  datasets::Subset<datasets::TensorDataset> sub(five_rows(), {4, 0, 2});
  CHECK(sub.size() == std::optional<size_t>(3));
  check_close(sub.get(0).data, {8, 9});
  check_close(sub.get(2).data, {4, 5});
  check_error([&] { sub.get(3); }, "out of range");

  std::vector<datasets::TensorDataset> parts{datasets::TensorDataset(seq({3, 1}), arange(3, kLong)),
                                             datasets::TensorDataset(seq({2, 1}) + 10, arange(2, kLong))};
  datasets::ConcatDataset<datasets::TensorDataset> cat(parts);
  CHECK(cat.size() == std::optional<size_t>(5));
  CHECK(cat.cumulative_sizes() == std::vector<size_t>{3, 5});
  check_close(cat.get(2).data, {2});
  check_close(cat.get(3).data, {10});  // first row of the second part
  check_close(cat.get(4).data, {11});
  check_error([&] { cat.get(5); }, "out of range");
  check_error([] { datasets::ConcatDataset<datasets::TensorDataset>({}); },
              "datasets should not be an empty iterable");
}

TEST_CASE("test_datasets: random_split counts, fractions, seeds and errors") {
  auto ds = datasets::TensorDataset(seq({100, 1}), arange(100, kLong));
  auto parts = datasets::random_split(ds, {60, 30, 10}, 7);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].size() == std::optional<size_t>(60));
  CHECK(parts[2].size() == std::optional<size_t>(10));
  // Disjoint and covering: every index exactly once.
  std::vector<size_t> all;
  for (auto& p : parts) all.insert(all.end(), p.indices().begin(), p.indices().end());
  std::vector<size_t> expect(100);
  std::iota(expect.begin(), expect.end(), size_t{0});
  CHECK(sorted(all) == expect);
  CHECK(all != expect);  // shuffled
  // The subset's rows are the source's rows at its indices.
  check_close(parts[1].get(5).data, {static_cast<double>(parts[1].indices()[5])});
  // Same seed, same split; another seed, another split.
  CHECK(datasets::random_split(ds, {60, 30, 10}, 7)[0].indices() == parts[0].indices());
  CHECK(datasets::random_split(ds, {60, 30, 10}, 8)[0].indices() != parts[0].indices());
  // Integer vectors work too.
  std::vector<size_t> counts{50, 50};
  CHECK(datasets::random_split(ds, counts, 1)[1].size() == std::optional<size_t>(50));

  // Fractions as PyTorch: floor(10 * f) = 3, 3, 3, remainder 1 goes to the first split.
  auto ten = datasets::TensorDataset(seq({10, 1}), arange(10, kLong));
  auto f = datasets::random_split(ten, {0.33, 0.33, 0.34}, 3);
  CHECK(f[0].size() == std::optional<size_t>(4));
  CHECK(f[1].size() == std::optional<size_t>(3));
  CHECK(f[2].size() == std::optional<size_t>(3));
  auto g = datasets::random_split(ten, {0.5, 0.3, 0.2}, 3);
  CHECK(g[0].size() == std::optional<size_t>(5));
  CHECK(g[2].size() == std::optional<size_t>(2));

  check_error(
      [&] {
        datasets::random_split(ten, {3, 3}, 1);
      },
      "Sum of input lengths does not equal the length of the input dataset!");
  check_error(
      [&] {
        datasets::random_split(ten, {1.5, -0.5}, 1);
      },
      "Fraction at index 0 is not between 0 and 1");
}

TEST_CASE("test_datasets: map with Stack collates into one example") {
  auto ds = five_rows().map(transforms::Stack<>());
  Example<> b = ds.get_batch(std::vector<size_t>{1, 3, 4});
  CHECK(shape(b.data) == std::vector<int64_t>{3, 2});
  check_close(b.data, {2, 3, 6, 7, 8, 9});
  CHECK(b.target.dtype() == kLong);
  check_close(b.target, {1, 3, 4});
  CHECK(ds.size() == std::optional<size_t>(5));
  // TensorDataset's gathered fast path equals stacking the rows one by one.
  Example<> slow = transforms::Stack<>().apply_batch(five_rows().get_batch(std::vector<size_t>{4, 1, 1}));
  Example<> fast = ds.get_batch(std::vector<size_t>{4, 1, 1});
  check_close(fast.data, slow.data);
  check_close(fast.target, slow.target);
  CHECK(fast.target.dtype() == slow.target.dtype());
  check_error([&] { ds.get_batch(std::vector<size_t>{5}); }, "index 5 is out of bounds for dimension 0 with size 5");
  // A non-contiguous data tensor takes the index_select route: rows of seq(2, 5)^T are (i, i + 5).
  auto strided = datasets::TensorDataset(seq({2, 5}).t(), arange(5, kLong)).map(transforms::Stack<>());
  check_close(strided.get_batch(std::vector<size_t>{3, 0}).data, {3, 8, 0, 5});
  // Target-less examples stack their data only.
  transforms::Stack<TensorExample> stack;
  TensorExample t = stack.apply_batch({TensorExample(seq({2})), TensorExample(seq({2}) + 1)});
  check_close(t.data, {0, 1, 1, 2});
}

TEST_CASE("test_datasets: Normalize scalar and per channel, Lambda") {
  // Scalar: (x - 0.5) / 0.25 for x = 0, 1, 2, 3.
  auto ds = datasets::TensorDataset(seq({2, 1, 2, 2}, kFloat), arange(2, kLong))
                .map(transforms::Normalize<>(0.5, 0.25))
                .map(transforms::Stack<>());
  Example<> b = ds.get_batch(std::vector<size_t>{0});
  CHECK(b.data.dtype() == kFloat);
  check_close(b.data, {-2, 2, 6, 10});
  // Per channel, C = 2: channel 0 (x - 1) / 2 on {0, 1}; channel 1 (x - 2) / 4 on {2, 3}.
  transforms::Normalize<> norm({1.0, 2.0}, {2.0, 4.0});
  check_close(norm(seq({2, 1, 2})), {-0.5, 0.0, 0.0, 0.25});
  CHECK(shape(norm.mean) == std::vector<int64_t>{2, 1, 1});
  check_error([] { transforms::Normalize<>(0.0, 0.0); }, "std evaluated to zero");

  // A Lambda over whole examples and a map chain: (x * 2) then + target.
  auto doubled =
      five_rows()
          .map(transforms::Lambda<>([](Example<> e) { return Example<>(e.data * 2 + e.target, e.target); }))
          .map(transforms::Stack<>());
  check_close(doubled.get_batch(std::vector<size_t>{2}).data, {8 + 2, 10 + 2});
  // A per-example MapDataset still has get(), so it can be split and subset.
  auto single = five_rows().map(transforms::TensorLambda<>([](Tensor t) { return t.neg(); }));
  check_close(single.get(1).data, {-2, -3});
  auto halves = datasets::random_split(single, {0.6, 0.4}, 2);
  CHECK(halves[0].size() == std::optional<size_t>(3));
  size_t k = halves[1].indices()[0];
  check_close(halves[1].get(0).data, {-2.0 * k, -2.0 * k - 1});
}

TEST_CASE("test_datasets: RandomCrop matches a crop of the zero-padded image") {
  Tensor img = seq({1, 4, 4}) + 1;  // values 1..16, so padding zeros are recognisable
  // Reference: pad explicitly, then try every offset; the result must be one of them.
  Tensor padded = zeros({1, 6, 6}, kDouble);
  padded.narrow(1, 1, 4).narrow(2, 1, 4).copy_(img);
  transforms::RandomCrop<> crop(4, 1);
  std::set<std::pair<int, int>> offsets_seen;
  for (size_t i = 0; i < 60; ++i) {
    LoaderSeedGuard seed(11, 0);
    SampleScope scope(i, 1);
    Tensor out = crop(img);
    REQUIRE(shape(out) == std::vector<int64_t>{1, 4, 4});
    bool found = false;
    for (int r = 0; r <= 2 && !found; ++r)
      for (int c = 0; c <= 2 && !found; ++c)
        if (values(out) == values(padded.narrow(1, r, 4).narrow(2, c, 4))) {
          found = true;
          offsets_seen.insert({r, c});
        }
    CHECK(found);
  }
  CHECK(offsets_seen.size() == 9);  // every offset of the 3x3 range shows up in 60 draws
  // Without padding and the full size, the crop is the image itself.
  check_close(transforms::RandomCrop<>(4)(img), img);
  // Non-square size.
  CHECK(shape(transforms::RandomCrop<>(std::array<int64_t, 2>{2, 3})(img)) == std::vector<int64_t>{1, 2, 3});
  check_error([&] { transforms::RandomCrop<>(5)(img); },
              "Required crop size (5, 5) is larger than input image size (4, 4)");
}

TEST_CASE("test_datasets: RandomHorizontalFlip") {
  Tensor img = seq({1, 2, 3});
  check_close(transforms::RandomHorizontalFlip<>(1.0)(img), {2, 1, 0, 5, 4, 3});
  check_close(transforms::RandomHorizontalFlip<>(0.0)(img), img);
  int flipped = 0;
  transforms::RandomHorizontalFlip<> flip;
  for (size_t i = 0; i < 400; ++i) {
    LoaderSeedGuard seed(5, 0);
    SampleScope scope(i, 1);
    flipped += values(flip(img))[0] == 2;
  }
  CHECK(flipped > 140);  // Binomial(400, 0.5): mean 200, sd 10
  CHECK(flipped < 260);
  check_error([] { transforms::RandomHorizontalFlip<>(1.5); }, "p must be in [0, 1]");
}

TEST_CASE("test_datasets: random transforms depend on (seed, epoch, index), not on load order") {
  auto ds = datasets::TensorDataset(seq({8, 1, 5, 5}) + 1, arange(8, kLong))
                .map(transforms::RandomCrop<>(5, 2))
                .map(transforms::RandomHorizontalFlip<>())
                .map(transforms::Stack<>());
  auto load = [&](std::vector<size_t> idx, uint64_t seed, uint64_t epoch) {
    LoaderSeedGuard g(seed, epoch);
    return ds.get_batch(idx).data;
  };
  Tensor fwd = load({0, 1, 2, 3, 4, 5, 6, 7}, 3, 0);
  Tensor rev = load({7, 6, 5, 4, 3, 2, 1, 0}, 3, 0);
  check_close(fwd, rev.flip({0}));  // sample i gets the same crop in any order
  CHECK(values(load({0, 1, 2, 3, 4, 5, 6, 7}, 3, 1)) != values(fwd));  // another epoch differs
  CHECK(values(load({0, 1, 2, 3, 4, 5, 6, 7}, 4, 0)) != values(fwd));  // another seed differs
  check_close(load({0, 1, 2, 3, 4, 5, 6, 7}, 3, 0), fwd);              // and it is reproducible
}
