// The per-element loss terms (core/ops/loss_math.h) that the CPU loops and the CUDA kernels
// (cuda/loss.cu) both call: binary_cross_entropy's clamped logs over edge inputs (0, -0, 1,
// denormals, out of [0, 1], NaN) in float and double against a long double reference, and
// nll_loss's term and gradient (ignored targets, weights, signs of zero, NaN).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ember/core/ops/loss_math.h"

using namespace ember;

namespace {

/// PyTorch's clamp of a log at -100, NaN kept (std::fmax would drop it).
long double clamp_log(long double l) { return std::isnan(l) ? l : (l < -100 ? -100.0L : l); }

long double ref_bce(long double x, long double t) {
  return (t - 1) * clamp_log(std::log1p(-x)) - t * clamp_log(std::log(x));
}

template <class M>
void check_bce() {
  using L = std::numeric_limits<M>;
  const std::vector<M> xs = {M(0),   M(-0.0),           L::denorm_min(), L::min(), M(1e-30),
                             M(0.25), M(0.5),           M(1) - L::epsilon(), M(1), M(1.5),
                             M(-0.5), L::quiet_NaN(),   L::infinity()};
  const std::vector<M> ts = {M(0), M(1), M(0.3), M(-0.0), L::quiet_NaN()};
  for (M x : xs) {
    for (M t : ts) {
      CAPTURE(x);
      CAPTURE(t);
      M got = BinaryCrossEntropyFn{}(x, t);
      long double want = ref_bce(x, t);
      if (std::isnan(want)) {
        CHECK(std::isnan(got));
      } else {
        // Both terms are >= 0 for x and t in [0, 1] (no cancellation), so the error is
        // relative even for tiny losses, where log1p(-x) and log(1 - x) part ways.
        CHECK(std::fabs(got - want) <= 4 * L::epsilon() * std::fabs(want));
      }
    }
  }
}

}  // namespace

TEST_CASE("loss_math: binary_cross_entropy's term over edge inputs, float and double") {
  check_bce<float>();
  check_bce<double>();
  // The clamp: a certain and wrong prediction costs exactly 100, a right one exactly 0.
  CHECK(BinaryCrossEntropyFn{}(0.0f, 1.0f) == 100.0f);
  CHECK(BinaryCrossEntropyFn{}(1.0, 0.0) == 100.0);
  CHECK(BinaryCrossEntropyFn{}(1.0f, 1.0f) == 0.0f);
  CHECK(BinaryCrossEntropyFn{}(0.0, 0.0) == 0.0);
}

TEST_CASE("loss_math: nll_loss's term, offset and gradient") {
  // x viewed as (N=2, C=3, S=2): x[n, c, s] = 100 n + 10 c + s.
  std::vector<double> x(12);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t s = 0; s < 2; ++s) x[static_cast<size_t>((n * 3 + c) * 2 + s)] = 100.0 * n + 10.0 * c + s;
  const std::vector<double> w = {0.5, 2.0, -1.0};
  auto load_x = [&x](int64_t off) { return x[static_cast<size_t>(off)]; };
  auto load_w = [&w](int64_t c) { return w[static_cast<size_t>(c)]; };
  // Target k = n * S + s with class t reads x[n, t, s].
  CHECK(nll_offset(3, 3, 2, 2) == (1 * 3 + 2) * 2 + 1);
  CHECK(nll_term<double>(3, 2, 3, 2, -100, false, load_x, load_w) == -121.0);
  CHECK(nll_term<double>(3, 2, 3, 2, -100, true, load_x, load_w) == 121.0);  // weight -1
  CHECK(nll_term<double>(0, 1, 3, 2, -100, true, load_x, load_w) == -20.0);
  // An ignored target adds nothing, whatever it would read.
  CHECK(nll_term<double>(1, 2, 3, 2, 2, true, load_x, load_w) == 0.0);
  // x = 0 with weight 1 gives -0, as -w * x does.
  double z = nll_term<double>(0, 0, 3, 2, -100, false, load_x, load_w);
  CHECK(z == 0.0);
  CHECK(std::signbit(z));
  CHECK(nll_grad(2.0f, 3.0f, 0.25f) == -1.5f);
  CHECK(nll_grad(-1.0, 4.0, 1.0) == 4.0);
  CHECK(std::isnan(nll_grad(1.0, std::numeric_limits<double>::quiet_NaN(), 1.0)));
  CHECK(std::isinf(nll_grad(1.0f, 1.0f, std::numeric_limits<float>::infinity())));
}
