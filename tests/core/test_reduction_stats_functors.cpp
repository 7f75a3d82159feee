// The shared terms of var/std, logsumexp and norm (core/ops/reduce_math.h), the ones the CPU
// folds and the CUDA kernels (cuda/reduce_stats.cu) both run: folded here over edge data
// (0, -0, +-inf, NaN, denormals, huge and tiny values, empty) in one order and in split
// partials, against long double references computed directly from the definitions.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ember/core/ops/minmax_math.h"
#include "ember/core/ops/reduce_math.h"

using namespace ember;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kDenorm = std::numeric_limits<double>::denorm_min();

/// got equals want: both NaN, the same infinity, or within rel (relative to |want|, or
/// absolute below 1).
void check_near(double got, long double want, double rel) {
  CAPTURE(got);
  CAPTURE(static_cast<double>(want));
  if (std::isnan(want)) {
    CHECK(std::isnan(got));
  } else if (std::isinf(want)) {
    CHECK(got == static_cast<double>(want));
  } else {
    long double scale = std::fabs(want) > 1 ? std::fabs(want) : 1.0L;
    CHECK(std::fabs(static_cast<long double>(got) - want) <= rel * scale);
  }
}

std::vector<std::vector<double>> data_sets() {
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  std::vector<double> noisy, offset;
  for (int i = 0; i < 257; ++i) noisy.push_back(normal(gen));
  // A large mean over small spread: the corrected two-pass keeps the variance's digits.
  for (int i = 0; i < 100; ++i) offset.push_back(1e8 + normal(gen));
  return {{},
          {0.0},
          {-0.0, 0.0},
          {2.5},
          {3.0, 3.0, 3.0},
          {1.0, 2.0, 3.0, 4.0},
          {kDenorm, -kDenorm, 0.0, -0.0},
          {1e300, -1e300, 1e-300},
          {-5.0, kInf},
          {-kInf, -kInf},
          {kInf, -kInf, 1.0},
          {1.0, kNan, 2.0},
          {-1000.0, -1000.0, -999.0},
          {1000.0, 1000.0},
          noisy,
          offset};
}

bool any_nan(const std::vector<double>& xs) {
  for (double x : xs)
    if (std::isnan(x)) return true;
  return false;
}

// ---- var ----------------------------------------------------------------------------------

/// The variance from its definition, in long double: sum((x - mean)^2) / max(0, n - c).
long double ref_var(const std::vector<double>& xs, double correction) {
  long double n = static_cast<long double>(xs.size()), sum = 0, m2 = 0;
  for (double x : xs) sum += x;
  long double mean = sum / n;
  for (double x : xs) m2 += (x - mean) * (x - mean);
  long double dof = n - correction > 0 ? n - correction : 0.0L;
  return m2 / dof;
}

/// var by the shared terms, the deviations folded in `parts` partials merged in order.
double fold_var(const std::vector<double>& xs, double correction, bool take_sqrt, size_t parts) {
  double n = static_cast<double>(xs.size()), sum = 0;
  for (double x : xs) sum += x;
  double mean = sum / n;
  std::vector<Deviations> partials(parts, Deviations{mean, 0, 0});
  size_t chunk = xs.empty() ? 1 : (xs.size() + parts - 1) / parts;
  for (size_t i = 0; i < xs.size(); ++i) partials[i / chunk] = var_step(partials[i / chunk], xs[i]);
  Deviations all = partials[0];
  for (size_t k = 1; k < parts; ++k) all = var_combine(all, partials[k]);
  return var_finish(all, n, correction, take_sqrt);
}

// ---- logsumexp ----------------------------------------------------------------------------

long double ref_lse(const std::vector<double>& xs) {
  if (any_nan(xs)) return kNan;
  long double hi = -kInf;
  for (double x : xs) hi = x > hi ? x : hi;
  if (std::isinf(hi)) return hi;  // +inf present, or everything -inf (or nothing)
  long double s = 0;
  for (double x : xs) s += std::exp(static_cast<long double>(x) - hi);
  return hi + std::log(s);
}

template <class M>
double fold_lse(const std::vector<double>& xs, size_t parts) {
  M hi = extreme_init<true, M>();
  for (double x : xs) hi = pick_extreme<true>(hi, static_cast<M>(x));
  M shift = lse_shift(hi);
  std::vector<LseAcc<M>> partials(parts, LseAcc<M>{shift, 0});
  size_t chunk = xs.empty() ? 1 : (xs.size() + parts - 1) / parts;
  for (size_t i = 0; i < xs.size(); ++i)
    partials[i / chunk] = lse_step(partials[i / chunk], static_cast<M>(xs[i]));
  LseAcc<M> all = partials[0];
  for (size_t k = 1; k < parts; ++k) all = lse_combine(all, partials[k]);
  return lse_finish(all);
}

// ---- norm ---------------------------------------------------------------------------------

/// ||x||_p from its definition, PyTorch's special cases included; 0 when empty.
long double ref_norm(const std::vector<double>& xs, double p) {
  if (xs.empty()) return 0;
  if (p == 0) {
    long double count = 0;
    for (double x : xs) count += x != 0;  // NaN counts: it is not zero
    return count;
  }
  if (any_nan(xs)) return kNan;
  if (std::isinf(p)) {
    long double best = std::fabs(static_cast<long double>(xs[0]));
    for (double x : xs) {
      long double a = std::fabs(static_cast<long double>(x));
      best = (p > 0) == (a > best) && a != best ? a : best;
    }
    return best;
  }
  long double s = 0;
  for (double x : xs) s += std::pow(std::fabs(static_cast<long double>(x)), static_cast<long double>(p));
  return std::pow(s, 1.0L / p);
}

double fold_norm(const std::vector<double>& xs, double p, size_t parts) {
  NormKind k = norm_kind(p);
  std::vector<double> partials(parts, norm_init(k));
  size_t chunk = xs.empty() ? 1 : (xs.size() + parts - 1) / parts;
  for (size_t i = 0; i < xs.size(); ++i) partials[i / chunk] = norm_step(k, partials[i / chunk], xs[i], p);
  double all = partials[0];
  for (size_t j = 1; j < parts; ++j) all = norm_combine(k, all, partials[j]);
  return norm_finish(k, all, p, xs.empty());
}

}  // namespace

TEST_CASE("reduce_math: var/std terms against the definition, one pass and split partials") {
  for (const auto& xs : data_sets()) {
    for (double correction : {0.0, 1.0, 2.0, 5.0}) {
      for (size_t parts : {size_t{1}, size_t{3}}) {
        CAPTURE(xs.size());
        CAPTURE(correction);
        long double want = ref_var(xs, correction);
        // Where double and long double part ways: squares of 1e300 overflow double (inf), and
        // squares of denormals underflow to 0, so with no degrees of freedom left 0 / 0.
        if (xs.size() == 3 && xs[0] == 1e300) want = kInf;
        if (xs.size() == 4 && xs[0] == kDenorm && correction >= 4) want = kNan;
        check_near(fold_var(xs, correction, false, parts), want, 1e-9);
        check_near(fold_var(xs, correction, true, parts), std::sqrt(want), 1e-9);
      }
    }
  }
}

TEST_CASE("reduce_math: var_finish edge cases") {
  // Constant data: every deviation is exactly 0.
  CHECK(fold_var({7.25, 7.25, 7.25, 7.25}, 1.0, false, 2) == 0.0);
  // Rounding may make the sum of squares fall short of sum^2 / n: clamped to 0, not negative.
  CHECK(var_finish(Deviations{0, 1.0, 0.25}, 2, 1, false) == 0.0);
  CHECK(var_finish(Deviations{0, 1.0, 0.25}, 2, 1, true) == 0.0);
  // No elements: 0 / 0. One element with correction 1: 0 / 0. dof <= 0 with spread: inf.
  CHECK(std::isnan(var_finish(Deviations{0, 0, 0}, 0, 1, false)));
  CHECK(std::isnan(var_finish(Deviations{4, 0, 0}, 1, 1, false)));
  CHECK(var_finish(Deviations{0, 0, 2}, 2, 3, false) == kInf);
  CHECK(var_finish(Deviations{0, 0, 8}, 4, 0, true) == doctest::Approx(std::sqrt(2.0)));
  CHECK(std::isnan(var_finish(Deviations{0, kNan, kNan}, 4, 1, false)));
}

TEST_CASE("reduce_math: logsumexp terms in float and double against the definition") {
  for (const auto& xs : data_sets()) {
    CAPTURE(xs.size());
    bool float_safe = true;  // data a float can hold (else the float fold sees +-inf)
    for (double x : xs) float_safe = float_safe && (std::isinf(x) || std::isnan(x) || std::fabs(x) < 1e30);
    for (size_t parts : {size_t{1}, size_t{4}}) {
      check_near(fold_lse<double>(xs, parts), ref_lse(xs), 1e-13);
      if (float_safe && !(xs.size() == 100)) check_near(fold_lse<float>(xs, parts), ref_lse(xs), 2e-6);
    }
  }
  CHECK(lse_shift(kInf) == 0.0);
  CHECK(lse_shift(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(lse_shift(kNan)));
  CHECK(lse_shift(-3.5) == -3.5);
  CHECK(lse_shift(kDenorm) == kDenorm);
}

TEST_CASE("reduce_math: norm_kind picks PyTorch's special p") {
  CHECK(norm_kind(2) == NormKind::kTwo);
  CHECK(norm_kind(1) == NormKind::kOne);
  CHECK(norm_kind(0) == NormKind::kZero);
  CHECK(norm_kind(-0.0) == NormKind::kZero);
  CHECK(norm_kind(kInf) == NormKind::kInf);
  CHECK(norm_kind(-kInf) == NormKind::kNegInf);
  CHECK(norm_kind(3) == NormKind::kGeneral);
  CHECK(norm_kind(-1) == NormKind::kGeneral);
  CHECK(norm_kind(0.5) == NormKind::kGeneral);
  CHECK(norm_kind(kNan) == NormKind::kGeneral);
}

TEST_CASE("reduce_math: norm terms for every kind against the definition") {
  for (const auto& xs : data_sets()) {
    for (double p : {2.0, 1.0, 0.0, kInf, -kInf, 3.0, 0.5, -1.0, 1.5}) {
      for (size_t parts : {size_t{1}, size_t{3}}) {
        CAPTURE(xs.size());
        CAPTURE(p);
        long double want = ref_norm(xs, p);
        // Squares and cubes of 1e300 overflow double (not long double): the norm is inf.
        bool overflows = xs.size() == 3 && xs[0] == 1e300 && (p == 2 || p == 3 || p == 1.5);
        check_near(fold_norm(xs, p, parts), overflows ? kInf : want, 1e-12);
      }
    }
  }
  // A NaN wins the max and min of absolute values from either side of a merge.
  CHECK(std::isnan(norm_combine(NormKind::kInf, kNan, 3.0)));
  CHECK(std::isnan(norm_combine(NormKind::kInf, 3.0, kNan)));
  CHECK(std::isnan(norm_combine(NormKind::kNegInf, kNan, 3.0)));
  CHECK(std::isnan(norm_combine(NormKind::kNegInf, 3.0, kNan)));
  CHECK(norm_init(NormKind::kNegInf) == kInf);
  CHECK(norm_init(NormKind::kGeneral) == 0.0);
}
