// The row terms of softmax / log_softmax and their gradients (core/ops/softmax_math.h), the
// ones the CPU loops and the CUDA kernels (cuda/softmax.cu) both call: rows with edge values
// (0, -0, +-inf, NaN, denormals, huge spreads) in float and double against long double
// references written from the definitions, and the split row_constant/out form the loops use
// against the one-call form.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/core/ops/softmax_math.h"

using namespace ember;

namespace {

template <class M>
std::vector<std::vector<M>> rows() {
  using L = std::numeric_limits<M>;
  const M inf = L::infinity(), nan = L::quiet_NaN();
  return {{M(0)},
          {M(0), M(-0.0), M(1)},
          {M(1), M(2), M(3), M(4)},
          {M(-1000), M(-1000), M(-999)},
          {M(80), M(-80), M(0)},
          {L::denorm_min(), -L::denorm_min(), M(0)},
          {-inf, M(2), M(-0.5)},
          {-inf, -inf},
          {inf, M(1)},
          {M(1), nan, M(2)},
          {L::lowest() / 2, L::max() / 2}};
}

/// softmax (log_softmax) of the row from its definition in long double; a row with a NaN, a
/// +inf or only -inf is all NaN (PyTorch's exp(inf - inf) and 0 / 0).
std::vector<long double> ref_softmax(const std::vector<long double>& x, bool log) {
  long double m = -std::numeric_limits<long double>::infinity();
  bool nan_row = false;
  for (long double v : x) {
    nan_row = nan_row || std::isnan(v) || v == std::numeric_limits<long double>::infinity();
    m = v > m ? v : m;
  }
  nan_row = nan_row || std::isinf(m);
  long double s = 0;
  for (long double v : x) s += std::exp(v - m);
  std::vector<long double> out;
  for (long double v : x) {
    if (nan_row) out.push_back(std::numeric_limits<long double>::quiet_NaN());
    else out.push_back(log ? v - m - std::log(s) : std::exp(v - m) / s);
  }
  return out;
}

/// got is want within rel times the larger of |want| and `scale` (at least 1): log_softmax's
/// v - (m + log s) cancels, so its error is relative to the row's magnitude m.
template <class M>
void check_value(M got, long double want, long double rel, long double scale = 1) {
  CAPTURE(got);
  CAPTURE(static_cast<double>(want));
  scale = std::fmax(std::fmax(std::fabs(want), std::fabs(scale)), 1.0L);
  if (std::isnan(want)) CHECK(std::isnan(got));
  else if (std::isinf(want)) CHECK(got == static_cast<M>(want));
  else CHECK(std::fabs(got - want) <= rel * scale);
}

template <class M>
bool same_bits(M a, M b) {
  return std::memcmp(&a, &b, sizeof(M)) == 0;
}

template <bool Log, class M>
void check_forward(long double rel) {
  using F = SoftmaxFn<Log>;
  for (const auto& row : rows<M>()) {
    CAPTURE(row.size());
    // The loops' max (NaN skipped, as std::max(m, x) does) and sum in M.
    M m = -std::numeric_limits<M>::infinity(), s = 0;
    for (M v : row) m = v > m ? v : m;
    for (M v : row) s += math::exp(v - m);
    std::vector<long double> wide(row.begin(), row.end());
    std::vector<long double> want = ref_softmax(wide, Log);
    const M c = F::row_constant(m, s);
    for (size_t j = 0; j < row.size(); ++j) {
      M got = F::apply(row[j], m, s);
      check_value(got, want[j], rel, std::isfinite(m) ? m : 1);
      // The split form (a row constant hoisted out of the loop) is the same number.
      CHECK(same_bits(F::out(row[j], math::exp(row[j] - m), c), got));
    }
  }
}

/// softmax's gx = y (g - sum(g y)), log_softmax's gx = g - exp(y) sum(g), in long double.
template <bool Log, class M>
void check_backward(long double rel) {
  using B = SoftmaxBackwardFn<Log>;
  const std::vector<std::vector<M>> cases = {
      {M(0.25), M(0.75)}, {M(0.1), M(0.2), M(0.7)}, {M(1), M(0)}, {M(0), M(-0.0)}};
  const std::vector<M> grads = {M(1), M(-2), M(0.5), std::numeric_limits<M>::denorm_min()};
  for (const auto& y0 : cases) {
    // log_softmax's outputs are logs of probabilities.
    std::vector<M> y = y0;
    if (Log)
      for (M& v : y) v = math::log(v);
    M s = 0;
    long double sw = 0;
    for (size_t j = 0; j < y.size(); ++j) {
      s += B::row_term(grads[j], y[j]);
      sw += Log ? static_cast<long double>(grads[j]) : static_cast<long double>(grads[j]) * y[j];
    }
    check_value(s, sw, rel);
    for (size_t j = 0; j < y.size(); ++j) {
      long double g = grads[j], yy = y[j];
      long double want = Log ? g - std::exp(yy) * sw : yy * (g - sw);
      check_value(B::grad_in(grads[j], y[j], s), want, rel);
    }
  }
  // NaN and inf pass through: a NaN output or gradient gives NaN.
  const M nan = std::numeric_limits<M>::quiet_NaN();
  CHECK(std::isnan(B::grad_in(nan, M(0.5), M(1))));
  CHECK(std::isnan(B::grad_in(M(1), M(0.5), nan)));
}

}  // namespace

TEST_CASE("softmax_math: forward terms against the definition, float and double") {
  check_forward<false, float>(2e-6L);
  check_forward<true, float>(2e-6L);
  check_forward<false, double>(1e-14L);
  check_forward<true, double>(1e-14L);
}

TEST_CASE("softmax_math: -inf elements of a finite row come out exactly 0 (-inf for log)") {
  const float ninf = -std::numeric_limits<float>::infinity();
  CHECK(SoftmaxFn<false>::apply(ninf, 2.0f, 1.5f) == 0.0f);
  CHECK(SoftmaxFn<true>::apply(ninf, 2.0f, 1.5f) == ninf);
  CHECK(std::isnan(SoftmaxFn<false>::apply(ninf, ninf, 0.0f)));
  CHECK(std::isnan(SoftmaxFn<true>::apply(ninf, ninf, 0.0f)));
}

TEST_CASE("softmax_math: backward terms against the definition, float and double") {
  check_backward<false, float>(1e-6L);
  check_backward<true, float>(1e-6L);
  check_backward<false, double>(1e-14L);
  check_backward<true, double>(1e-14L);
}

TEST_CASE("softmax_math: the exp argument is the one the terms use") {
  // The CPU loops pass a vectorizable exp; whatever is passed must be what is called.
  auto two = [](float) { return 2.0f; };
  CHECK(SoftmaxFn<false>::apply(5.0f, 1.0f, 4.0f, two) == 0.5f);
  CHECK(SoftmaxBackwardFn<true>::grad_in(1.0f, 0.0f, 3.0f, two) == -5.0f);
  CHECK(SoftmaxBackwardFn<false>::grad_in(1.0f, 0.5f, 3.0f, two) == -1.0f);
}
