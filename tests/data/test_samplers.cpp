// Samplers: orders, seeds and epochs, weighted-draw statistics (bounds many standard errors
// wide, and the seeds are fixed, so the tests are deterministic), batch sampler drop_last.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "ember/data/samplers/batch.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/weighted_random.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;

namespace {
/// Every index of one pass, asking for batches of `bs`.
std::vector<size_t> drain(samplers::Sampler<>& s, size_t bs = 3) {
  std::vector<size_t> all;
  while (auto b = s.next(bs)) all.insert(all.end(), b->begin(), b->end());
  return all;
}
std::vector<size_t> iota(size_t n, size_t start = 0) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}
std::vector<size_t> sorted(std::vector<size_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST_CASE("test_samplers: SequentialSampler batches and reset") {
  samplers::SequentialSampler s(7);
  CHECK(s.next(3) == std::optional<std::vector<size_t>>(std::vector<size_t>{0, 1, 2}));
  CHECK(s.next(3) == std::optional<std::vector<size_t>>(std::vector<size_t>{3, 4, 5}));
  CHECK(s.next(3) == std::optional<std::vector<size_t>>(std::vector<size_t>{6}));
  CHECK_FALSE(s.next(3).has_value());
  CHECK(s.index() == 7);
  s.reset();
  CHECK(drain(s) == iota(7));
  s.reset(4);
  CHECK(drain(s, 10) == iota(4));
  samplers::SequentialSampler empty(0);
  CHECK_FALSE(empty.next(1).has_value());
}

TEST_CASE("test_samplers: RandomSampler is a seeded permutation per epoch") {
  samplers::RandomSampler a(10, 42), b(10, 42), c(10, 43);
  std::vector<size_t> e0 = drain(a);
  CHECK(sorted(e0) == iota(10));
  CHECK(e0 != iota(10));
  CHECK(drain(b) == e0);  // same seed, same order
  CHECK(drain(c) != e0);  // another seed
  a.reset();              // epoch 1
  std::vector<size_t> e1 = drain(a);
  CHECK(sorted(e1) == iota(10));
  CHECK(e1 != e0);
  a.set_epoch(0);  // replay epoch 0
  a.reset();
  CHECK(drain(a) == e0);
  a.set_epoch(1);
  a.reset();
  CHECK(drain(a) == e1);
  // Without a seed, manual_seed makes it reproducible.
  manual_seed(5);
  samplers::RandomSampler d(10);
  manual_seed(5);
  samplers::RandomSampler e(10);
  CHECK(drain(d) == drain(e));
  // reset(new_size) changes the size.
  a.reset(4);
  CHECK(sorted(drain(a)) == iota(4));
}

TEST_CASE("test_samplers: RandomSampler first elements are uniform") {
  // Over 4000 epochs each of 0..3 comes first with probability 1/4:
  // count ~ Binomial(4000, 0.25), mean 1000, sd 27; allow 6 sd.
  samplers::RandomSampler s(4, 9);
  std::vector<int> first(4, 0);
  for (int e = 0; e < 4000; ++e) {
    first[s.next(1)->at(0)]++;
    s.reset();
  }
  for (int k = 0; k < 4; ++k) {
    INFO("value " << k << " first " << first[k] << " times");
    CHECK(std::abs(first[k] - 1000) < 165);
  }
}

TEST_CASE("test_samplers: SubsetRandomSampler permutes the given indices") {
  samplers::SubsetRandomSampler s({10, 20, 30, 40}, 1);
  std::vector<size_t> e0 = drain(s);
  CHECK(sorted(e0) == std::vector<size_t>{10, 20, 30, 40});
  bool changed = false;
  for (int e = 0; e < 10; ++e) {
    s.reset();
    std::vector<size_t> en = drain(s);
    CHECK(sorted(en) == std::vector<size_t>{10, 20, 30, 40});
    changed |= en != e0;
  }
  CHECK(changed);
}

TEST_CASE("test_samplers: WeightedRandomSampler with replacement follows the weights") {
  // p = (1, 2, 3, 0) / 6; over 60000 draws each frequency has sd <= 0.002; allow 0.01.
  samplers::WeightedRandomSampler s(std::vector<double>{1, 2, 3, 0}, 60000, true, 3);
  std::vector<size_t> draws = drain(s, 1000);
  REQUIRE(draws.size() == 60000);
  std::vector<double> freq(4, 0);
  for (size_t d : draws) freq[d] += 1.0 / 60000;
  CHECK(std::fabs(freq[0] - 1.0 / 6) < 0.01);
  CHECK(std::fabs(freq[1] - 2.0 / 6) < 0.01);
  CHECK(std::fabs(freq[2] - 3.0 / 6) < 0.01);
  CHECK(freq[3] == 0);  // zero weight is never drawn
  // Epochs differ, and a tensor of weights works the same.
  samplers::WeightedRandomSampler t(tensor(std::vector<float>{1, 2, 3, 0}), 20, true, 3);
  std::vector<size_t> t0 = drain(t);
  CHECK(t0.size() == 20);
  t.reset();
  CHECK(drain(t) != t0);
}

TEST_CASE("test_samplers: WeightedRandomSampler without replacement") {
  // Draw 2 of weights (1, 2, 3) one at a time proportionally:
  // P({1, 2}) = P(1 then 2) + P(2 then 1) = (2/6)(3/4) + (3/6)(2/3) = 7/12 ~ 0.5833;
  // P(0 first) = 1/6. 10000 epochs: sd <= 0.005; allow 0.02.
  samplers::WeightedRandomSampler s(std::vector<double>{1, 2, 3}, 2, false, 8);
  int pair12 = 0, zero_first = 0;
  const int epochs = 10000;
  for (int e = 0; e < epochs; ++e) {
    std::vector<size_t> d = drain(s);
    REQUIRE(d.size() == 2);
    CHECK(d[0] != d[1]);
    pair12 += sorted(d) == std::vector<size_t>{1, 2};
    zero_first += d[0] == 0;
    s.reset();
  }
  CHECK(std::fabs(pair12 / double(epochs) - 7.0 / 12) < 0.02);
  CHECK(std::fabs(zero_first / double(epochs) - 1.0 / 6) < 0.02);
  // All of them: a permutation, zero weights never drawn.
  samplers::WeightedRandomSampler all(std::vector<double>{1, 1, 0, 1}, 3, false, 2);
  CHECK(sorted(drain(all)) == std::vector<size_t>{0, 1, 3});
}

TEST_CASE("test_samplers: WeightedRandomSampler errors") {
  using W = samplers::WeightedRandomSampler;
  check_error(
      [] {
        W(std::vector<double>{1, 2}, 0);
      },
      "num_samples should be a positive integer value, but got num_samples=0");
  check_error(
      [] {
        W(std::vector<double>{1, -2}, 3);
      },
      "invalid multinomial distribution (encountering probability entry < 0)");
  check_error(
      [] {
        W(std::vector<double>{0, 0}, 3);
      },
      "invalid multinomial distribution (sum of probabilities <= 0)");
  check_error(
      [] {
        W(std::vector<double>{1, 2}, 3, false);
      },
      "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  check_error(
      [] {
        W(std::vector<double>{1, 0, 0}, 2, false);
      },
      "not enough non-negative category to sample");
}

TEST_CASE("test_samplers: BatchSampler and drop_last") {
  samplers::BatchSampler keep(samplers::SequentialSampler(10), 3, false);
  std::vector<std::vector<size_t>> batches;
  while (auto b = keep.next()) batches.push_back(*b);
  REQUIRE(batches.size() == 4);
  CHECK(batches[0] == std::vector<size_t>{0, 1, 2});
  CHECK(batches[3] == std::vector<size_t>{9});
  samplers::BatchSampler drop(samplers::SequentialSampler(10), 3, true);
  int n = 0;
  while (auto b = drop.next()) {
    CHECK(b->size() == 3);
    ++n;
  }
  CHECK(n == 3);
  drop.reset();
  CHECK(drop.next() == std::optional<std::vector<size_t>>(std::vector<size_t>{0, 1, 2}));
  // Over a random sampler: full batches covering a permutation of 0..8.
  samplers::BatchSampler rnd(samplers::RandomSampler(9, 4), 3, true);
  std::vector<size_t> all;
  while (auto b = rnd.next()) all.insert(all.end(), b->begin(), b->end());
  CHECK(sorted(all) == iota(9));
  check_error([] { samplers::BatchSampler(samplers::SequentialSampler(3), 0, false); },
              "batch_size should be a positive integer value, but got batch_size=0");
}
