// Random tensors: seeding, ranges and loose statistics of rand/randn/randint/randperm/
// bernoulli, the in-place samplers' errors, thread-count independence and generator state.
// Statistical bounds are many standard errors wide, so the tests are deterministic in practice
// (and exactly deterministic for a fixed seed).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::shape;
using ember::test::values;

namespace {

struct Moments {
  double mean, std, min, max;
};

Moments moments(const Tensor& t) {
  std::vector<double> v = values(t);
  double s = 0, s2 = 0, lo = INFINITY, hi = -INFINITY;
  for (double x : v) {
    s += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  double mean = s / static_cast<double>(v.size());
  for (double x : v) s2 += (x - mean) * (x - mean);
  return {mean, std::sqrt(s2 / static_cast<double>(v.size() - 1)), lo, hi};
}

}  // namespace

TEST_CASE("test_random: manual_seed reproduces draws") {
  manual_seed(123);
  std::vector<double> a = values(rand({50}));
  std::vector<double> b = values(randn({7, 3}));
  manual_seed(123);
  CHECK(values(rand({50})) == a);
  CHECK(values(randn({7, 3})) == b);
  // Consecutive draws differ, and so do other seeds.
  CHECK(values(rand({50})) != a);
  manual_seed(124);
  CHECK(values(rand({50})) != a);
  // The same seed gives the same numbers whatever the dtype's layout of the draw.
  manual_seed(5);
  std::vector<double> p1 = values(randperm(20));
  manual_seed(5);
  CHECK(values(randperm(20)) == p1);
}

TEST_CASE("test_random: rand is in [0, 1)") {
  manual_seed(0);
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
    Tensor r = rand({20000}, dt);
    CHECK(r.dtype() == dt);
    Moments m = moments(r);
    CHECK(m.min >= 0.0);
    CHECK(m.max < 1.0);
    // Uniform(0,1): mean 1/2, std 1/sqrt(12) = 0.2887; standard error of the mean 0.002.
    CHECK(std::fabs(m.mean - 0.5) < 0.02);
    CHECK(std::fabs(m.std - 0.2887) < 0.02);
  }
  // Values lie on the grid k / 2^digits of the dtype's mantissa (as PyTorch's
  // uniform_real_distribution), so rounding to the dtype can never produce 1.0.
  for (auto [dt, digits] : {std::pair{kFloat, 24}, {kHalf, 11}, {kBFloat16, 8}, {kDouble, 53}}) {
    double scale = std::ldexp(1.0, digits);
    bool on_grid = true;
    for (double x : values(rand({5000}, dt))) on_grid = on_grid && std::floor(x * scale) == x * scale;
    INFO("dtype " << dt);
    CHECK(on_grid);
  }
  // uniform_(from, to) scales into [from, to).
  Tensor u = empty({10000}, kDouble).uniform_(-3, 5);
  Moments m = moments(u);
  CHECK(m.min >= -3);
  CHECK(m.max < 5);
  CHECK(std::fabs(m.mean - 1.0) < 0.15);  // (from + to) / 2, std err 8/sqrt(12)/100 = 0.023
  // rand_like keeps shape and dtype.
  Tensor rl = rand_like(zeros({3, 4}, kDouble));
  CHECK(shape(rl) == std::vector<int64_t>{3, 4});
  CHECK(rl.dtype() == kDouble);
  CHECK(rand({2}, requires_grad()).requires_grad());
}

TEST_CASE("test_random: randn mean and std on 100k samples") {
  manual_seed(2024);
  Tensor r = randn({100000});
  CHECK(r.dtype() == kFloat);
  Moments m = moments(r);
  // N(0,1): std err of the mean 0.0032, of the std about 0.0022.
  CHECK(std::fabs(m.mean) < 0.02);
  CHECK(std::fabs(m.std - 1.0) < 0.02);
  // Tails exist but are not absurd: P(|z| > 3) = 0.27%, P(|z| > 6) ~ 2e-9.
  int64_t beyond3 = 0;
  for (double x : values(r)) beyond3 += std::fabs(x) > 3;
  CHECK(beyond3 > 150);
  CHECK(beyond3 < 400);
  CHECK(m.max < 6);
  CHECK(m.min > -6);

  Tensor n = normal(3.0, 0.5, {50000}, kDouble);
  Moments mn = moments(n);
  CHECK(std::fabs(mn.mean - 3.0) < 0.02);
  CHECK(std::fabs(mn.std - 0.5) < 0.02);
  Tensor n2 = empty({50000}).normal_(-1.0, 2.0);
  Moments m2 = moments(n2);
  CHECK(std::fabs(m2.mean + 1.0) < 0.05);
  CHECK(std::fabs(m2.std - 2.0) < 0.05);
  // std == 0 is allowed and gives the mean exactly; so is from == to for uniform_.
  check_close(empty({2}).uniform_(2.5, 2.5), {2.5, 2.5});
  check_close(empty({3}).normal_(1.5, 0.0), {1.5, 1.5, 1.5});
  CHECK(randn_like(zeros({2}, kHalf)).dtype() == kHalf);
}

TEST_CASE("test_random: randint range") {
  manual_seed(7);
  Tensor r = randint(3, 9, {20000});
  CHECK(r.dtype() == kLong);
  std::vector<int64_t> counts(12, 0);
  for (double x : values(r)) {
    REQUIRE(x >= 3);
    REQUIRE(x < 9);
    REQUIRE(x == std::floor(x));
    ++counts[static_cast<size_t>(x)];
  }
  // Each of the 6 values appears about 20000/6 = 3333 times (std 53).
  for (int v = 3; v < 9; ++v) CHECK(std::abs(counts[v] - 3333) < 300);
  Tensor h = randint(5, {1000});
  Moments m = moments(h);
  CHECK(m.min == 0);
  CHECK(m.max == 4);
  CHECK(randint(0, 4, {3}, kInt32).dtype() == kInt);
  CHECK(randint(0, 4, {3}, TensorOptions()).dtype() == kLong);  // int64 unless asked otherwise
  Tensor f = randint(-2, 2, {100}, kFloat);
  CHECK(f.dtype() == kFloat);
  Moments mf = moments(f);
  CHECK(mf.min >= -2);
  CHECK(mf.max <= 1);
  Tensor rl = randint_like(zeros({5}, kInt16), 10, 12);
  CHECK(rl.dtype() == kShort);
  for (double x : values(rl)) CHECK((x == 10 || x == 11));
  check_error([] { randint(5, 3, {2}); }, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3");
  check_error([] { empty({2}).random_(5, 5); }, "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
}

TEST_CASE("test_random: randperm is a permutation") {
  manual_seed(11);
  for (int64_t n : {0, 1, 2, 10, 1000}) {
    Tensor p = randperm(n);
    CHECK(p.dtype() == kLong);
    CHECK(p.numel() == n);
    std::vector<double> v = values(p);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) CHECK(v[i] == static_cast<double>(i));
  }
  // Not the identity (for n = 1000 the chance is 1/1000!).
  std::vector<double> v = values(randperm(1000));
  std::vector<double> id(1000);
  std::iota(id.begin(), id.end(), 0.0);
  CHECK(v != id);
  CHECK(randperm(5, kInt32).dtype() == kInt);
  CHECK(randperm(5, TensorOptions()).dtype() == kLong);
  // torch.randperm(-1)
  check_error([] { randperm(-1); }, "Trying to create tensor with negative dimension -1: [-1]");
}

TEST_CASE("test_random: bernoulli frequency") {
  manual_seed(3);
  Tensor b = bernoulli(zeros({20000}), 0.3);
  double mean = moments(b).mean;
  // std err sqrt(0.3*0.7/20000) = 0.0032
  CHECK(std::fabs(mean - 0.3) < 0.02);
  for (double x : values(b)) REQUIRE((x == 0 || x == 1));
  // A tensor of probabilities: exactly 0 and 1 are certain.
  Tensor p = tensor({0.0, 1.0, 0.0, 1.0});
  check_close(bernoulli(p), {0, 1, 0, 1});
  check_close(p.bernoulli(), {0, 1, 0, 1});
  Tensor pp = full({20000}, 0.8, kDouble);
  Tensor bp = bernoulli(pp);
  CHECK(bp.dtype() == kDouble);
  CHECK(std::fabs(moments(bp).mean - 0.8) < 0.02);
  // bernoulli_ also works on integer tensors.
  Tensor bi = zeros({10000}, kInt32).bernoulli_(0.5);
  CHECK(std::fabs(moments(bi).mean - 0.5) < 0.03);
  check_close(zeros({4}).bernoulli_(1.0), {1, 1, 1, 1});
  check_close(ones({4}).bernoulli_(0.0), {0, 0, 0, 0});

  check_error([] { zeros({3}).bernoulli_(2); }, "bernoulli_ expects p to be in [0, 1], but got p=2");
  check_error([] { bernoulli(tensor({0.5, 1.5})); }, "Expected p_in >= 0 && p_in <= 1 to be true");
  check_error([] { bernoulli(tensor({1, 0})); }, "not implemented for 'Long'");
}

TEST_CASE("test_random: sampler errors") {
  // torch.zeros(3).normal_(0, -1)
  check_error([] { zeros({3}).normal_(0, -1); }, "normal expects std >= 0.0, but found std -1");
  check_error([] { normal(0, -2, {3}); }, "normal expects std >= 0.0, but found std -2");
  check_error([] { zeros({3}).uniform_(2, 1); },
              "uniform_ expects to return a [from, to) range, but found from=2 > to=1");
  check_error([] { zeros({3}, kLong).uniform_(); }, "\"check_uniform_bounds\" not implemented for 'Long'");
  check_error([] { zeros({3}, kLong).normal_(); }, "\"normal_kernel_cpu\" not implemented for 'Long'");
  check_error([] { zeros({1}).expand({3}).uniform_(); },
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location.");
  check_error([] { zeros({2, 1}).expand({2, 2}).normal_(); }, "more than one element of the written-to tensor");
  check_error([] { ones({2}, requires_grad()).uniform_(); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("test_random: in-place samplers on views and version counter") {
  manual_seed(9);
  Tensor base = zeros({4, 6});
  Tensor col = base.select(1, 2);  // non-contiguous view
  uint32_t v0 = base._version();
  col.uniform_(10, 11);
  CHECK(base._version() == v0 + 1);  // one in-place write, one bump
  Tensor whole = zeros({5});
  uint32_t w0 = whole._version();
  whole.normal_();
  CHECK(whole._version() == w0 + 1);
  std::vector<double> all = values(base);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      double x = all[i * 6 + j];
      if (j == 2) CHECK((x >= 10 && x < 11));
      else CHECK(x == 0);
    }
}

TEST_CASE("test_random: results do not depend on the thread count") {
  int saved = get_num_threads();
  auto draw = [] {
    manual_seed(42);
    std::vector<double> out;
    for (const Tensor& t : {rand({100000}), randn({70001}, kDouble), randint(0, 1000, {50000}),
                            bernoulli(zeros({40000}), 0.25), randperm(3000)}) {
      std::vector<double> v = values(t);
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  };
  set_num_threads(1);
  std::vector<double> one = draw();
  set_num_threads(2);
  std::vector<double> two = draw();
  set_num_threads(4);
  std::vector<double> four = draw();
  set_num_threads(saved);
  CHECK(one == two);
  CHECK(one == four);
}

TEST_CASE("test_random: generator state round trip") {
  Generator& g = default_cpu_generator();
  manual_seed(99);
  CHECK(g.current_seed() == 99);
  CHECK(g.offset() == 0);
  rand({10});
  CHECK(g.offset() == 10);  // one Philox block per element
  std::vector<uint8_t> state = g.get_state();
  CHECK(state.size() == 16);
  std::vector<double> a = values(randn({20}));
  std::vector<double> b = values(rand({5}, kDouble));
  g.set_state(state);
  CHECK(values(randn({20})) == a);
  CHECK(values(rand({5}, kDouble)) == b);
  // A fresh generator restored from the state continues identically too.
  Generator other(1);
  other.set_state(state);
  CHECK(other.current_seed() == 99);
  CHECK(other.offset() == 10);
  check_error([&] { g.set_state(std::vector<uint8_t>(3)); }, "RNG state must be 16 bytes (seed, offset), got 3");
  // manual_seed resets the offset.
  manual_seed(99);
  CHECK(g.offset() == 0);
}

TEST_CASE("test_random: philox known answer") {
  // Random123's known-answer test for philox4x32-10: counter = 0, key = 0 gives
  // 6627e8d5 e169c58d bc57ac4c 9b00dbd8.
  uint32_t w[4];
  philox::block(0, 0, w);
  CHECK(w[0] == 0x6627e8d5u);
  CHECK(w[1] == 0xe169c58du);
  CHECK(w[2] == 0xbc57ac4cu);
  CHECK(w[3] == 0x9b00dbd8u);
}

TEST_CASE("test_random: sampling into a tensor with history cuts it") {
  // y = 2a; y.uniform_() makes y independent of a, so a's gradient is zero (as PyTorch).
  Tensor a = ones({3}, requires_grad());
  Tensor y = a * 2;
  y.uniform_();
  y.sum().backward();
  ember::test::check_close(a.grad(), {0.0, 0.0, 0.0});
  Tensor b = ones({3}, requires_grad());
  Tensor z = b * 2;
  z.normal_();
  (z * b).sum().backward();
  ember::test::check_close(b.grad(), ember::test::values(z));  // only the direct use of b counts
}
