// The shared rules of the value-selecting reductions (core/ops/minmax_math.h), swept over edge
// values of every compute type (0, -0, +-inf, NaN, denormals, integer extremes) against a
// reference written here: each value's place in a hand-sorted list. These are the very
// functions the CUDA kernels run (cuda/minmax.cu, cuda/reduce_stats.cu), so a GPU-less build
// checks their rules too. The statistical terms are in test_reduction_stats_functors.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ember/core/ops/minmax_math.h"

using namespace ember;

namespace {

/// A value and its rank in ascending order; equal numbers (0 and -0) share a rank, NaN has
/// none (kNanRank).
template <class M>
struct Ranked {
  M value;
  int rank;
};

constexpr int kNanRank = 1000;

/// Edge values of the compute type M, ranked by hand.
template <class M>
std::vector<Ranked<M>> edge_values() {
  using L = std::numeric_limits<M>;
  if constexpr (std::is_same_v<M, bool>) {
    return {{false, 0}, {true, 1}};
  } else if constexpr (std::is_unsigned_v<M>) {
    return {{M(0), 0}, {M(1), 1}, {M(L::max() - 1), 2}, {L::max(), 3}};
  } else if constexpr (std::is_integral_v<M>) {
    return {{L::lowest(), 0}, {M(L::lowest() + 1), 1}, {M(-1), 2}, {M(0), 3},
            {M(1), 4},        {M(L::max() - 1), 5},    {L::max(), 6}};
  } else {
    return {{-L::infinity(), 0}, {L::lowest(), 1},    {M(-1), 2},         {-L::denorm_min(), 3},
            {M(-0.0), 4},        {M(0), 4},           {L::denorm_min(), 5}, {L::min(), 6},
            {M(1), 7},           {L::max(), 8},       {L::infinity(), 9},   {L::quiet_NaN(), kNanRank},
            {-L::quiet_NaN(), kNanRank}};
  }
}

/// How strongly a value wins a max (IsMax) or min: NaN above everything for both.
template <bool IsMax, class M>
int priority(const Ranked<M>& r) {
  if (r.rank == kNanRank) return 2 * kNanRank;
  return IsMax ? r.rank : -r.rank;
}

template <class M>
bool is_nan(M x) {
  if constexpr (std::is_floating_point_v<M>)
    return std::isnan(x);
  else
    return false;
}

template <class M>
bool same_bits(M a, M b) {
  return std::memcmp(&a, &b, sizeof(M)) == 0;
}

template <bool IsMax, class M>
void check_init_and_pick() {
  const M init = extreme_init<IsMax, M>();
  for (const auto& v : edge_values<M>()) {
    // The start is pick_extreme's identity from either side; NaN stays NaN.
    M from_left = pick_extreme<IsMax>(init, v.value);
    if (v.rank == kNanRank) {
      CHECK(is_nan(from_left));
    } else {
      CHECK(from_left == v.value);
      CHECK(same_bits(pick_extreme<IsMax>(v.value, init), v.value));
      CHECK_FALSE(beats<IsMax>(init, v.value));
    }
  }
  for (const auto& a : edge_values<M>()) {
    for (const auto& v : edge_values<M>()) {
      CAPTURE(a.rank);
      CAPTURE(v.rank);
      bool wins = priority<IsMax>(v) > priority<IsMax>(a);
      CHECK(beats<IsMax>(v.value, a.value) == wins);
      // The running value stays on ties (0 against -0 keeps its own sign); of two NaNs either
      // may be kept, the result is NaN.
      M picked = pick_extreme<IsMax>(a.value, v.value);
      if (a.rank == kNanRank && v.rank == kNanRank)
        CHECK(is_nan(picked));
      else
        CHECK(same_bits(picked, wins ? v.value : a.value));
    }
  }
}

/// The first position of the strongest value: argmax's (argmin's) answer, found directly.
template <bool IsMax, class M>
int64_t ref_arg(const std::vector<Ranked<M>>& xs) {
  int64_t best = 0;
  for (size_t i = 1; i < xs.size(); ++i)
    if (priority<IsMax>(xs[i]) > priority<IsMax>(xs[best])) best = static_cast<int64_t>(i);
  return best;
}

/// Folds xs split into `parts` chunks (each stepped in order), merging the partials in the
/// order `perm` gives, as the CUDA tree (or the CPU's interleaved lanes) may.
template <bool IsMax, class M>
ArgAcc<M> fold_split(const std::vector<Ranked<M>>& xs, size_t parts, std::mt19937& gen) {
  using F = ArgExtreme<IsMax, M>;
  std::vector<ArgAcc<M>> partials(parts, F::init());
  size_t chunk = (xs.size() + parts - 1) / parts;
  for (size_t i = 0; i < xs.size(); ++i)
    partials[i / chunk] = F::step(partials[i / chunk], xs[i].value, static_cast<int64_t>(i));
  while (partials.size() > 1) {
    std::uniform_int_distribution<size_t> pick(0, partials.size() - 1);
    size_t a = pick(gen), b = pick(gen);
    if (a == b) continue;
    partials[a] = F::combine(partials[a], partials[b]);
    partials.erase(partials.begin() + static_cast<std::ptrdiff_t>(b));
  }
  return partials[0];
}

template <bool IsMax, class M>
void check_arg_extreme() {
  using F = ArgExtreme<IsMax, M>;
  const auto edges = edge_values<M>();
  std::mt19937 gen(7);
  std::uniform_int_distribution<size_t> any(0, edges.size() - 1);
  CHECK(F::init().index == -1);
  for (int trial = 0; trial < 400; ++trial) {
    // Short runs drawn from few edges, so ties (and several NaNs) are common.
    size_t n = 1 + static_cast<size_t>(trial % 9);
    std::vector<Ranked<M>> xs;
    for (size_t i = 0; i < n; ++i) xs.push_back(edges[any(gen) % (trial % 2 ? 3 : edges.size())]);
    int64_t want = ref_arg<IsMax>(xs);
    for (size_t parts : {size_t{1}, size_t{2}, n}) {
      CAPTURE(trial);
      CAPTURE(parts);
      ArgAcc<M> got = fold_split<IsMax>(xs, parts, gen);
      CHECK(got.index == want);
      CHECK(same_bits(got.value, xs[static_cast<size_t>(want)].value));
    }
  }
  // An empty partial is the identity of combine, from either side.
  ArgAcc<M> one = F::step(F::init(), edges[0].value, 5);
  CHECK(F::combine(F::init(), one).index == 5);
  CHECK(F::combine(one, F::init()).index == 5);
  CHECK(F::combine(F::init(), F::init()).index == -1);
}

template <class M>
void check_type() {
  check_init_and_pick<true, M>();
  check_init_and_pick<false, M>();
  check_arg_extreme<true, M>();
  check_arg_extreme<false, M>();
}

}  // namespace

TEST_CASE("minmax_math: extreme_init, beats and pick_extreme over edge values of every compute type") {
  // The compute types of all dtypes: float16/bfloat16 compute in float.
  check_type<float>();
  check_type<double>();
  check_type<bool>();
  check_type<uint8_t>();
  check_type<int8_t>();
  check_type<int16_t>();
  check_type<int32_t>();
  check_type<int64_t>();
}

TEST_CASE("minmax_math: extreme_init is the type's far end") {
  CHECK(extreme_init<true, float>() == -std::numeric_limits<float>::infinity());
  CHECK(extreme_init<false, double>() == std::numeric_limits<double>::infinity());
  CHECK(extreme_init<true, int64_t>() == std::numeric_limits<int64_t>::lowest());
  CHECK(extreme_init<false, int8_t>() == 127);
  CHECK(extreme_init<true, uint8_t>() == 0);
  CHECK(extreme_init<false, bool>() == true);
}
