// The statistics and gradient coefficients of batch, layer and group norm
// (core/ops/normalization_math.h), the ones the CPU kernels and the CUDA kernels
// (cuda/normalization.cu) both call: moments from shifted sums against a direct long double
// mean and variance (large offsets, constant rows, no elements, NaN), the input gradient
// k1 go + k2 x + k3 (AffineGradFn) against the textbook form rs (dxhat - mean(dxhat) - xhat
// mean(dxhat xhat)), and the outputs (affine_coefs with ScaleShiftFn, LayerNormAffineFn)
// against (x - mean) rstd w + b in long double, in float and double.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ember/core/ops/normalization_math.h"

using namespace ember;

namespace {

void check_near(double got, long double want, long double tol) {
  CAPTURE(got);
  CAPTURE(static_cast<double>(want));
  if (std::isnan(want))
    CHECK(std::isnan(got));
  else
    CHECK(std::fabs(got - want) <= tol * std::fmax(1.0L, std::fabs(want)));
}

/// The moments the kernels compute: sums of x - x[0], then shifted_moments.
NormMoments kernel_moments(const std::vector<double>& xs) {
  double K = xs.empty() ? 0.0 : xs[0], s1 = 0, s2 = 0;
  for (double x : xs) {
    s1 += x - K;
    s2 += (x - K) * (x - K);
  }
  return shifted_moments(K, s1, s2, static_cast<double>(xs.size()));
}

std::vector<double> random_row(std::mt19937& gen, size_t n, double offset, double spread) {
  std::normal_distribution<double> normal;
  std::vector<double> xs;
  for (size_t i = 0; i < n; ++i) xs.push_back(offset + spread * normal(gen));
  return xs;
}

}  // namespace

TEST_CASE("normalization_math: moments from shifted sums against a direct long double pass") {
  std::mt19937 gen(11);
  std::vector<std::vector<double>> rows = {{2.5},
                                           {1.0, 2.0, 3.0, 4.0},
                                           {7.0, 7.0, 7.0},
                                           {-0.0, 0.0},
                                           {1e-300, -1e-300, 0.0},
                                           random_row(gen, 100, 0.0, 1.0),
                                           random_row(gen, 300, 1e8, 1.0),  // the shift keeps the digits
                                           random_row(gen, 50, -3e5, 1e-3)};
  for (const auto& xs : rows) {
    CAPTURE(xs.size());
    long double sum = 0, m2 = 0;
    for (double x : xs) sum += x;
    long double mean = sum / xs.size();
    for (double x : xs) m2 += (x - mean) * (x - mean);
    NormMoments mo = kernel_moments(xs);
    check_near(mo.mean, mean, 1e-15L);
    check_near(mo.var, m2 / xs.size(), 1e-9L);
    check_near(norm_rstd(mo.var, 1e-5), 1 / std::sqrt(m2 / xs.size() + 1e-5L), 1e-9L);
  }
  // A constant row has variance exactly 0; no elements: the shift and 0.
  CHECK(kernel_moments({3.25, 3.25, 3.25}).var == 0.0);
  NormMoments none = shifted_moments(5.0, 0, 0, 0);
  CHECK(none.mean == 5.0);
  CHECK(none.var == 0.0);
  // Rounding below 0 is clamped; NaN is kept.
  CHECK(shifted_moments(0, 1.0, 0.25, 2).var == 0.0);
  NormMoments nan = kernel_moments({1.0, std::nan(""), 2.0});
  CHECK(std::isnan(nan.mean));
  CHECK(std::isnan(nan.var));
  CHECK(norm_rstd(0.0, 0.25) == 2.0);
  CHECK(std::isinf(norm_rstd(0.0, 0.0)));
}

TEST_CASE("normalization_math: row (layer/group norm) input gradient coefficients") {
  std::mt19937 gen(5);
  for (size_t D : {size_t{1}, size_t{3}, size_t{64}}) {
    std::vector<double> x = random_row(gen, D, 0.5, 2.0), go = random_row(gen, D, 0.0, 1.0),
                        w = random_row(gen, D, 1.0, 0.3);
    NormMoments mo = kernel_moments(x);
    const double rs = norm_rstd(mo.var, 1e-5);
    long double A = 0, B = 0, mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (size_t d = 0; d < D; ++d) {
      A += w[d] * go[d];
      B += w[d] * (go[d] * (x[d] - mo.mean));
      long double xhat = (x[d] - static_cast<long double>(mo.mean)) * rs;
      mean_dxhat += static_cast<long double>(w[d]) * go[d] / D;
      mean_dxhat_xhat += static_cast<long double>(w[d]) * go[d] * xhat / D;
    }
    GradCoefs kc =
        row_grad_coefs(rs, mo.mean, static_cast<double>(A), static_cast<double>(B), static_cast<double>(D));
    for (size_t d = 0; d < D; ++d) {
      CAPTURE(D);
      long double xhat = (x[d] - static_cast<long double>(mo.mean)) * rs;
      long double want = rs * (static_cast<long double>(w[d]) * go[d] - mean_dxhat - xhat * mean_dxhat_xhat);
      check_near(AffineGradFn{}(go[d], x[d], w[d] * rs, kc.k2, kc.k3), want, 1e-10L);
    }
  }
}

TEST_CASE("normalization_math: batch norm input gradient coefficients") {
  std::mt19937 gen(8);
  const size_t count = 40;
  std::vector<double> x = random_row(gen, count, -1.0, 3.0), go = random_row(gen, count, 0.2, 1.0);
  NormMoments mo = kernel_moments(x);
  const double rs = norm_rstd(mo.var, 1e-5), w = 0.75, k1 = w * rs;
  long double sg = 0, sgx = 0;
  for (size_t i = 0; i < count; ++i) {
    sg += go[i];
    sgx += go[i] * (x[i] - mo.mean);
  }
  GradCoefs kc = batch_grad_coefs(k1, rs, mo.mean, static_cast<double>(sg), static_cast<double>(sgx),
                                  static_cast<double>(count), true);
  for (size_t i = 0; i < count; ++i) {
    long double xhat = (x[i] - static_cast<long double>(mo.mean)) * rs;
    long double want = k1 * (go[i] - sg / count - xhat * (sgx * rs / count));
    check_near(AffineGradFn{}(go[i], x[i], k1, kc.k2, kc.k3), want, 1e-10L);
  }
  // Running statistics (eval) or no elements: the statistics are constants, gi = k1 go.
  GradCoefs eval = batch_grad_coefs(k1, rs, mo.mean, 1.0, 2.0, 40.0, false);
  CHECK(eval.k2 == 0.0);
  CHECK(eval.k3 == 0.0);
  GradCoefs empty = batch_grad_coefs(k1, rs, mo.mean, 0.0, 0.0, 0.0, true);
  CHECK(empty.k2 == 0.0);
  CHECK(empty.k3 == 0.0);
}

namespace {

/// The outputs in compute type M, both forms, against (x - mean) rstd w + b in long double:
/// ScaleShiftFn with affine_coefs (batch norm, group norm) and LayerNormAffineFn (layer norm).
template <class M>
void check_outputs(long double rel) {
  std::mt19937 gen(13);
  for (double offset : {0.0, 5.0, -300.0}) {
    std::vector<double> x = random_row(gen, 50, offset, 2.0);
    NormMoments mo = kernel_moments(x);
    const double rs = norm_rstd(mo.var, 1e-5);
    for (double w : {1.0, 0.75, -2.5})
      for (double b : {0.0, 0.1, -4.0}) {
        CAPTURE(offset);
        CAPTURE(w);
        CAPTURE(b);
        const AffineCoefs k = affine_coefs(w, b, mo.mean, rs);
        for (double xv : x) {
          const long double want = (xv - static_cast<long double>(mo.mean)) * rs * w + b;
          // The coefficients' rounding is relative to the terms x scale and shift, which can be
          // far larger than the output (a large offset cancels).
          const long double mag = std::fabs(xv * k.scale) + std::fabs(k.shift) + std::fabs(b);
          const M got = ScaleShiftFn{}(static_cast<M>(xv), static_cast<M>(k.scale), static_cast<M>(k.shift));
          CHECK(std::fabs(got - want) <= rel * std::fmax(1.0L, mag));
          const M ln = LayerNormAffineFn{}(static_cast<M>(xv), static_cast<M>(mo.mean), static_cast<M>(rs),
                                           static_cast<M>(w), static_cast<M>(b));
          CHECK(std::fabs(ln - want) <= rel * std::fmax(1.0L, mag));
        }
      }
  }
}

}  // namespace

TEST_CASE("normalization_math: outputs from affine coefficients, float and double") {
  check_outputs<float>(4e-6L);
  check_outputs<double>(1e-14L);
}

TEST_CASE("normalization_math: affine functors, hand-worked and non-finite") {
  // mean 2, rstd 0.5, w 3, b 1: scale 1.5, shift 1 - 2 * 1.5 = -2; x = 4 gives 4 (both forms).
  const AffineCoefs k = affine_coefs(3.0, 1.0, 2.0, 0.5);
  CHECK(k.scale == 1.5);
  CHECK(k.shift == -2.0);
  CHECK(ScaleShiftFn{}(4.0f, 1.5f, -2.0f) == 4.0f);
  CHECK(LayerNormAffineFn{}(4.0f, 2.0f, 0.5f, 3.0f, 1.0f) == 4.0f);
  // No weight and bias: affine_coefs(1, 0, m, rs) is the plain normalisation (x - m) rs.
  const AffineCoefs plain = affine_coefs(1.0, 0.0, 2.0, 0.5);
  CHECK(ScaleShiftFn{}(6.0, plain.scale, plain.shift) == 2.0);
  // go k1 + x k2 + k3 with go 2, x 3, k 0.5, -1, 0.25: 1 - 3 + 0.25.
  CHECK(AffineGradFn{}(2.0f, 3.0f, 0.5f, -1.0f, 0.25f) == -1.75f);
  CHECK(AffineGradFn{}(2.0, 3.0, 0.5, 0.0, 0.0) == 1.0);
  // NaN and inf inputs propagate (no clamping in the formulas).
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(std::isnan(ScaleShiftFn{}(nan, 1.0, 0.0)));
  CHECK(std::isnan(LayerNormAffineFn{}(inf, 0.0, 1.0, 1.0, -inf)));
  CHECK(std::isnan(AffineGradFn{}(1.0, nan, 1.0, 1.0, 1.0)));
  CHECK(AffineGradFn{}(inf, 1.0, 2.0, 0.0, 0.0) == inf);
}
