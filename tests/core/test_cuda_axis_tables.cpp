// The tables and per-element functions of the CUDA separable-map and max-pooling kernels
// (cuda/axis_tables.h), run on the CPU: the transposed tables list every tap once, in output
// order; map_point and adjoint_point agree with a dense-matrix reference on random maps (with
// repeated indices and empty outputs) and with the CPU's avg_pool2d and its gradient;
// max_window and max_scatter_point reproduce the CPU's max_pool2d values, indices and
// gradient bit for bit (ties, NaN, dilation, ceil_mode, overlapping and empty windows), and
// gather_offset the reflection padding. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ember/core/ops/padding.h"
#include "ember/core/ops/pooling.h"
#include "ember/core/ops/separable_map.h"
#include "ember/cuda/axis_tables.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::cuda;
using resample::AxisMap;

namespace {

/// A random map: each output has 0..3 taps (repeats allowed), weights in [-1, 1), divisors in [1, 3).
AxisMap random_map(int64_t in, int64_t out, std::mt19937& rng) {
  AxisMap m(in);
  std::uniform_int_distribution<int64_t> taps(0, 3), idx(0, in - 1);
  std::uniform_real_distribution<double> w(-1, 1), d(1, 3);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = taps(rng); k > 0; --k) m.add(idx(rng), w(rng));
    m.close(d(rng));
  }
  return m;
}

/// The map as a dense (out, in) matrix, divisors left out.
std::vector<std::vector<double>> dense(const AxisMap& m) {
  std::vector<std::vector<double>> a(m.out_size(), std::vector<double>(m.in_size, 0.0));
  for (int64_t o = 0; o < m.out_size(); ++o)
    for (int64_t t = m.start[o]; t < m.start[o + 1]; ++t) a[o][m.index[t]] += m.weight[t];
  return a;
}

struct Views {
  PackedTables packed;
  AxisView h, w;
};

Views views(const AxisMap& h, const AxisMap& w) {
  Views v{pack_tables(h, w), {}, {}};
  v.h = view_axis(v.packed.h, v.packed.ints.data(), v.packed.reals.data());
  v.w = view_axis(v.packed.w, v.packed.ints.data(), v.packed.reals.data());
  return v;
}

// The axes the pooling ops build (core/ops/pooling.cpp's window_axis and avg_axis).
AxisMap window_axis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pad, int64_t dil) {
  AxisMap m(in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = o * s - pad + j * dil;
      if (i >= 0 && i < in) m.add(i);
    }
    m.close();
  }
  return m;
}

AxisMap avg_axis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pad, bool count_include_pad) {
  AxisMap m(in);
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * s - pad, end = std::min(start + k, in + pad), pool = end - start;
    start = std::max<int64_t>(start, 0);
    end = std::min(end, in);
    for (int64_t i = start; i < end; ++i) m.add(i);
    m.close(end > start ? static_cast<double>(count_include_pad ? pool : end - start) : 1.0);
  }
  return m;
}

std::vector<double> values_of(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::vector<int64_t> longs_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

/// The windows of max_pool2d on an (H, W) plane, as the op builds them.
struct Pool {
  int64_t H, W, kH, kW, sH, sW, pH, pW, dH, dW;
  bool ceil;
  int64_t oh() const { return pooling_output_shape(H, kH, pH, sH, dH, ceil); }
  int64_t ow() const { return pooling_output_shape(W, kW, pW, sW, dW, ceil); }
  AxisMap h() const { return window_axis(H, oh(), kH, sH, pH, dH); }
  AxisMap w() const { return window_axis(W, ow(), kW, sW, pW, dW); }
};

/// max_window over every output of every plane vs. max_pool2d_with_indices, and
/// max_scatter_point vs. its gradient (grad = g), all exact.
void check_max_pool(const Pool& p, const Tensor& x) {
  AxisMap hm = p.h(), wm = p.w();
  Views v = views(hm, wm);
  Tensor leaf = x.detach().requires_grad_(true);
  auto [out, idx] =
      max_pool2d_with_indices(leaf, {p.kH, p.kW}, {p.sH, p.sW}, {p.pH, p.pW}, {p.dH, p.dW}, p.ceil);
  Tensor g = rand(out.sizes(), kDouble).to(x.dtype());
  out.backward(g);
  const int64_t planes = x.numel() / (p.H * p.W), per_out = p.oh() * p.ow(), per_in = p.H * p.W;
  REQUIRE(out.numel() == planes * per_out);
  std::vector<double> xs = values_of(x), ys = values_of(out), gs = values_of(g), gx = values_of(leaf.grad());
  std::vector<int64_t> is = longs_of(idx);
  const double lowest = -std::numeric_limits<double>::infinity();
  for (int64_t q = 0; q < planes; ++q) {
    for (int64_t o = 0; o < per_out; ++o) {
      auto hit = max_window<double>(v.h, v.w, o / p.ow(), o % p.ow(), lowest,
                                    [&](int64_t k) { return xs[q * per_in + k]; });
      const double want = ys[q * per_out + o];
      CHECK((hit.value == want || (std::isnan(hit.value) && std::isnan(want))));
      CHECK(hit.at == is[q * per_out + o]);
    }
    const bool any_empty = v.packed.h.any_empty || v.packed.w.any_empty;
    for (int64_t i = 0; i < per_in; ++i) {
      double got = max_scatter_point<double>(
          v.h, v.w, i / p.W, i % p.W, any_empty && i == 0, [&](int64_t o) { return gs[q * per_out + o]; },
          [&](int64_t o) { return is[q * per_out + o]; }, [](double a) { return a; });
      CHECK(got == gx[q * per_in + i]);
    }
  }
}

}  // namespace

TEST_CASE("cuda axis tables: the transpose lists every tap once, per input in output order") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    AxisMap h = random_map(1 + trial % 7, trial % 5, rng), w = random_map(2 + trial % 3, 1 + trial % 6, rng);
    Views v = views(h, w);
    for (const auto& [m, a] : {std::pair<const AxisMap*, AxisView>{&h, v.h}, {&w, v.w}}) {
      std::vector<int> seen(m->index.size(), 0);
      REQUIRE(a.in_start[0] == 0);
      REQUIRE(a.in_start[m->in_size] == static_cast<int64_t>(m->index.size()));
      for (int64_t i = 0; i < m->in_size; ++i) {
        for (int64_t s = a.in_start[i]; s < a.in_start[i + 1]; ++s) {
          const int64_t tap = a.in_tap[s];
          CHECK(m->index[tap] == i);
          ++seen[tap];
          if (s > a.in_start[i]) CHECK(a.in_tap[s - 1] < tap);
          CHECK(m->start[a.tap_out[tap]] <= tap);
          CHECK(tap < m->start[a.tap_out[tap] + 1]);
        }
      }
      for (int c : seen) CHECK(c == 1);
    }
  }
}

TEST_CASE("cuda axis tables: map_point and adjoint_point match the dense matrices on random maps") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> val(-2, 2);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t H = 1 + trial % 4, W = 2 + trial % 5, Ho = trial % 3 + 1, Wo = 1 + trial % 4;
    AxisMap h = random_map(H, Ho, rng), w = random_map(W, Wo, rng);
    Views v = views(h, w);
    auto A = dense(h), B = dense(w);
    std::vector<double> x(H * W), g(Ho * Wo);
    for (double& e : x) e = val(rng);
    for (double& e : g) e = val(rng);
    for (int64_t oh = 0; oh < Ho; ++oh)
      for (int64_t ow = 0; ow < Wo; ++ow) {
        double want = 0;
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw) want += A[oh][ih] * B[ow][iw] * x[ih * W + iw];
        want /= h.divisor[oh] * w.divisor[ow];
        CHECK(map_point<double>(v.h, v.w, oh, ow, [&](int64_t k) { return x[k]; }) ==
              doctest::Approx(want).epsilon(1e-12));
      }
    for (int64_t ih = 0; ih < H; ++ih)
      for (int64_t iw = 0; iw < W; ++iw) {
        double want = 0;
        for (int64_t oh = 0; oh < Ho; ++oh)
          for (int64_t ow = 0; ow < Wo; ++ow)
            want += A[oh][ih] * B[ow][iw] * g[oh * Wo + ow] / (h.divisor[oh] * w.divisor[ow]);
        CHECK(adjoint_point<double>(v.h, v.w, ih, iw, [&](int64_t k) { return g[k]; }) ==
              doctest::Approx(want).epsilon(1e-12));
      }
  }
}

TEST_CASE("cuda axis tables: avg_pool2d and its gradient through map_point / adjoint_point") {
  ember::manual_seed(5);
  struct Case {
    int64_t H, W, k, s, pad;
    bool ceil, cip;
  };
  for (const Case& c : {Case{7, 9, 3, 2, 1, false, true}, Case{7, 9, 3, 2, 1, true, false},
                        Case{5, 5, 2, 1, 0, false, true}, Case{6, 4, 4, 3, 2, true, true}}) {
    Tensor x = randn({2, 3, c.H, c.W}, kDouble).requires_grad_(true);
    Tensor y = avg_pool2d(x, {c.k}, {c.s}, {c.pad}, c.ceil, c.cip);
    Tensor g = randn(y.sizes(), kDouble);
    y.backward(g);
    const int64_t Ho = y.size(2), Wo = y.size(3);
    AxisMap hm = avg_axis(c.H, Ho, c.k, c.s, c.pad, c.cip), wm = avg_axis(c.W, Wo, c.k, c.s, c.pad, c.cip);
    Views v = views(hm, wm);
    std::vector<double> xs = values_of(x), ys = values_of(y), gs = values_of(g), gx = values_of(x.grad());
    for (int64_t q = 0; q < 6; ++q) {
      for (int64_t o = 0; o < Ho * Wo; ++o)
        CHECK(map_point<double>(v.h, v.w, o / Wo, o % Wo, [&](int64_t k) { return xs[q * c.H * c.W + k]; }) ==
              doctest::Approx(ys[q * Ho * Wo + o]).epsilon(1e-14));
      for (int64_t i = 0; i < c.H * c.W; ++i)
        CHECK(adjoint_point<double>(v.h, v.w, i / c.W, i % c.W, [&](int64_t k) {
                return gs[q * Ho * Wo + k];
              }) == doctest::Approx(gx[q * c.H * c.W + i]).epsilon(1e-14));
    }
  }
}

TEST_CASE("cuda axis tables: max_window and max_scatter_point are the CPU's max_pool2d, bit for bit") {
  ember::manual_seed(8);
  // Overlapping windows (stride < kernel), padding, dilation, ceil_mode.
  check_max_pool(Pool{7, 8, 3, 3, 1, 1, 1, 1, 1, 1, false}, randn({2, 2, 7, 8}, kDouble));
  check_max_pool(Pool{9, 7, 3, 2, 2, 2, 1, 0, 2, 1, true}, randn({3, 9, 7}, kDouble));
  check_max_pool(Pool{6, 6, 2, 2, 2, 2, 0, 0, 1, 1, false}, randn({1, 2, 6, 6}, kDouble));
  // Ties keep the first position; NaN wins and stays.
  Tensor ties = randint(0, 3, {2, 5, 6}, kLong).to(kDouble);
  check_max_pool(Pool{5, 6, 3, 3, 1, 2, 1, 1, 1, 1, true}, ties);
  Tensor nans = randn({1, 5, 5}, kDouble);
  nans.index_put_({0, 2, 2}, std::nan(""));
  nans.index_put_({0, 0, 1}, std::nan(""));
  check_max_pool(Pool{5, 5, 2, 2, 1, 1, 0, 0, 1, 1, false}, nans);
  // An empty window (kernel 2, dilation 3, padding 2 over a width of 2: the middle output
  // reads nothing and reports index 0).
  Pool empty{3, 2, 1, 2, 1, 1, 0, 2, 1, 3, false};
  REQUIRE(empty.ow() == 3);
  REQUIRE(empty.w().start[2] == empty.w().start[1]);
  check_max_pool(empty, randn({2, 3, 2}, kDouble));
}

TEST_CASE("cuda axis tables: gather_offset is the reflection padding") {
  Tensor x = arange(2 * 4 * 5, kDouble).reshape({2, 4, 5});
  Tensor y = reflection_pad2d(x, {2, 1, 3, 2});
  AxisMap hm(4), wm(5);
  for (int64_t o = 0; o < 4 + 5; ++o) {
    int64_t i = o - 3;
    hm.add(i < 0 ? -i : (i >= 4 ? 6 - i : i));
    hm.close();
  }
  for (int64_t o = 0; o < 5 + 3; ++o) {
    int64_t i = o - 2;
    wm.add(i < 0 ? -i : (i >= 5 ? 8 - i : i));
    wm.close();
  }
  Views v = views(hm, wm);
  std::vector<double> ys = values_of(y);
  for (int64_t q = 0; q < 2; ++q)
    for (int64_t o = 0; o < 9 * 8; ++o)
      CHECK(static_cast<double>(q * 20 + gather_offset(v.h, v.w, o / 8, o % 8)) == ys[q * 72 + o]);
}
