// The index math and reduction layout of the CUDA loss kernels (cuda/loss_plan.h), run on the
// CPU: the two-pass layout folds every term exactly once; nll_offset and nll_term reproduce
// the CPU's nll_loss per target for 1-d, 2-d and K-d inputs with weights and ignore_index;
// the folded sum and NllStats give the CPU's Sum and Mean; the first out-of-range target is
// the one the CPU's error names. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/core/ops/loss.h"
#include "ember/cuda/loss_plan.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::cuda;

namespace {

/// The two passes of cuda/loss.cu's fold, on the host in the kernels' order: thread t of
/// block b folds terms b*T + t + j*blocks*T, each block folds its threads as a halving
/// tree, and one block folds the partials the same way.
template <class Acc, class Term, class Combine>
Acc simulate_fold(int64_t count, Acc init, const Term& term, const Combine& combine) {
  const int64_t blocks = loss_blocks(count), T = kLossThreads;
  auto tree = [&](std::vector<Acc> v) {
    for (int64_t h = T / 2; h > 0; h /= 2)
      for (int64_t t = 0; t < h; ++t) v[t] = combine(v[t], v[t + h]);
    return v[0];
  };
  std::vector<Acc> partials;
  for (int64_t b = 0; b < blocks; ++b) {
    std::vector<Acc> lanes(T, init);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t k = b * T + t; k < count; k += blocks * T) lanes[t] = combine(lanes[t], term(k));
    partials.push_back(tree(lanes));
  }
  std::vector<Acc> lanes(T, init);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = t; j < blocks; j += T) lanes[t] = combine(lanes[t], partials[j]);
  return tree(lanes);
}

struct NllCase {
  Tensor logp, target, weight;
  int64_t ignore_index;
};

/// The input (N, C, S) geometry nll_loss uses.
void geometry(const Tensor& x, int64_t& c, int64_t& s) {
  c = x.dim() == 1 ? x.size(0) : x.size(1);
  s = 1;
  for (int64_t d = 2; d < x.dim(); ++d) s *= x.size(d);
}

void check_case(const NllCase& nc) {
  const Tensor& x = nc.logp;
  int64_t c, s;
  geometry(x, c, s);
  std::optional<Tensor> w = nc.weight.defined() ? std::optional<Tensor>(nc.weight) : std::nullopt;
  Tensor none = nll_loss(x, nc.target, w, Reduction::None, nc.ignore_index).reshape({-1});
  Tensor sum = nll_loss(x, nc.target, w, Reduction::Sum, nc.ignore_index);
  Tensor mean = nll_loss(x, nc.target, w, Reduction::Mean, nc.ignore_index);
  Tensor xc = x.contiguous(), tc = nc.target.reshape({-1}).contiguous();
  const double* xp = xc.data_ptr<double>();
  const int64_t* tp = tc.data_ptr<int64_t>();
  const double* wp = nc.weight.defined() ? nc.weight.data_ptr<double>() : nullptr;
  auto load_x = [&](int64_t off) { return xp[off]; };
  auto load_w = [&](int64_t t) { return wp[t]; };
  auto term = [&](int64_t k) {
    return nll_term<double>(k, tp[k], c, s, nc.ignore_index, wp != nullptr, load_x, load_w);
  };
  const int64_t count = tc.numel();
  for (int64_t k = 0; k < count; ++k) CHECK(term(k) == none.select(0, k).item<double>());
  double folded = simulate_fold(count, 0.0, term, [](double a, double b) { return a + b; });
  CHECK(folded == doctest::Approx(sum.item<double>()).epsilon(1e-13));
  NllStats st = simulate_fold(
      count, NllStats{},
      [&](int64_t k) {
        return nll_stats_term(k, tp[k], c, nc.ignore_index, [&](int64_t t) { return wp ? wp[t] : 1.0; });
      },
      combine_nll_stats);
  CHECK(st.first_bad == kNoBadTarget);
  if (st.total_weight == 0)
    CHECK(std::isnan(mean.item<double>()));
  else
    CHECK(folded / st.total_weight == doctest::Approx(mean.item<double>()).epsilon(1e-13));
}

}  // namespace

TEST_CASE("cuda loss plan: the two-pass layout folds every term once") {
  CHECK(loss_blocks(0) == 1);
  CHECK(loss_blocks(1) == 1);
  CHECK(loss_blocks(kLossThreads) == 1);
  CHECK(loss_blocks(kLossThreads + 1) == 2);
  CHECK(loss_blocks(int64_t{1} << 40) == kLossMaxBlocks);
  for (int64_t count : {0, 1, 255, 256, 257, 5000, 300000}) {
    std::vector<int> seen(static_cast<size_t>(count), 0);
    auto mark = [&](int64_t k) {
      ++seen[k];
      return 0;
    };
    simulate_fold(count, 0, mark, [](int a, int b) { return a + b; });
    for (int v : seen) CHECK(v == 1);
  }
}

TEST_CASE("cuda loss plan: nll_offset is (n, t, s) of an (N, C, S) input") {
  Tensor x = arange(2 * 5 * 3 * 4, kLong).reshape({2, 5, 3, 4});
  for (int64_t k = 0; k < 2 * 12; ++k)
    for (int64_t t = 0; t < 5; ++t)
      CHECK(nll_offset(k, 5, 12, t) == x.index({k / 12, t, (k % 12) / 4, k % 4}).item<int64_t>());
  CHECK(nll_offset(3, 7, 1, 2) == 3 * 7 + 2);
}

TEST_CASE("cuda loss plan: nll terms, folded sums and stats match the CPU's nll_loss") {
  ember::manual_seed(21);
  // 1-d input, 2-d with weights and ignore_index, K-d (N, C, H, W) and (N, C, D) targets.
  check_case({randn({6}, kDouble), tensor(int64_t{4}), Tensor(), -100});
  Tensor t2 = randint(0, 7, {300}, kLong);
  t2.index_put_({indexing::Slice(0, 300, 7)}, -1);
  check_case({randn({300, 7}, kDouble), t2, rand({7}, kDouble) + 0.5, -1});
  Tensor t4 = randint(0, 4, {3, 5, 6}, kLong);
  t4.index_put_({1, 2, 3}, 2);
  check_case({randn({3, 4, 5, 6}, kDouble), t4, rand({4}, kDouble), 2});
  check_case({randn({2, 3, 9}, kDouble), randint(0, 3, {2, 9}, kLong), Tensor(), -100});
  // Every target ignored: total weight 0 (Mean is 0 / 0 = NaN on both).
  check_case({randn({4, 3}, kDouble), full({4}, 1, kLong), Tensor(), 1});
}

TEST_CASE("cuda loss plan: the first out-of-range target is the one the CPU names") {
  std::vector<int64_t> t(1000, 1);
  t[700] = 7;
  t[420] = -3;
  t[999] = 5;
  t[100] = -100;  // ignored, not out of range
  NllStats st = simulate_fold(
      1000, NllStats{},
      [&](int64_t k) { return nll_stats_term(k, t[k], 5, -100, [](int64_t) { return 1.0; }); },
      combine_nll_stats);
  REQUIRE(st.first_bad == 420);
  std::string msg;
  try {
    nll_loss(zeros({1000, 5}, kDouble), tensor(t));
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(msg == "Target " + std::to_string(t[st.first_bad]) + " is out of bounds.");
}
