// add_histogram's binning (tools/tensorboard/histogram.h) against numpy.histogram through
// PyTorch's make_histogram rules (fixtures/make_histogram_fixture.py), and its edge cases.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ember/core/error.h"
#include "ember/tools/tensorboard/histogram.h"
#include "fixtures/histogram_fixture.h"

using namespace ember::tensorboard::detail;

TEST_CASE("the tensorflow bins are PyTorch's: +-1e-12 * 1.1^k below 1e20, and 0") {
  const auto& bins = tensorflow_bins();
  REQUIRE(bins.size() % 2 == 1);
  const size_t mid = bins.size() / 2;
  CHECK(bins[mid] == 0.0);
  CHECK(bins[mid + 1] == 1e-12);
  CHECK(bins[mid + 2] == 1e-12 * 1.1);
  CHECK(bins.back() < 1e20);
  CHECK(bins.back() * 1.1 >= 1e20);
  for (size_t i = 0; i < mid; ++i) CHECK(bins[i] == -bins[bins.size() - 1 - i]);
  CHECK(bins.size() == 1549);  // len(SummaryWriter().default_bins)
}

TEST_CASE("make_histogram matches numpy.histogram with PyTorch's trimming") {
  for (const auto& c : histogram_fixture::cases()) {
    const std::string name = c.name;
    CAPTURE(name);
    std::vector<double> edges;
    const std::string bins = c.bins;
    if (bins == "tensorflow") edges = tensorflow_bins();
    else if (bins == "edges") edges = c.edges;
    else edges = uniform_bin_edges(c.values, std::stoll(bins));
    const HistogramData h = make_histogram(c.values, edges, c.max_bins);
    CHECK(h.bucket_limit == c.limits);  // bit-exact edges
    CHECK(h.bucket == c.counts);
    CHECK(h.min == c.min);
    CHECK(h.max == c.max);
    CHECK(h.num == c.num);
    // numpy sums pairwise and dots through BLAS: the same up to rounding.
    CHECK(h.sum == doctest::Approx(c.sum).epsilon(1e-12));
    CHECK(h.sum_squares == doctest::Approx(c.sum_squares).epsilon(1e-12));
  }
}

TEST_CASE("make_histogram by hand: buckets named by right edges, a leading empty bucket") {
  // Edges 0,1,2,3,4: [0,1) [1,2) [2,3) [3,4]; values fill the 2nd and 4th bins.
  const HistogramData h = make_histogram({1.5, 3.0, 4.0, 1.0}, {0, 1, 2, 3, 4});
  CHECK(h.bucket_limit == std::vector<double>{1, 2, 3, 4});  // from the bucket left of the first used
  CHECK(h.bucket == std::vector<double>{0, 2, 0, 2});
  CHECK(h.min == 1.0);
  CHECK(h.max == 4.0);
  CHECK(h.num == 4);
  CHECK(h.sum == 9.5);
  CHECK(h.sum_squares == 1.5 * 1.5 + 9 + 16 + 1);
  // Data in the first bin: a zero bucket is prepended at the first edge.
  const HistogramData g = make_histogram({0.5}, {0, 1, 2});
  CHECK(g.bucket_limit == std::vector<double>{0, 1});
  CHECK(g.bucket == std::vector<double>{0, 1});
  // Values outside the edges count in num/min/max/sum only.
  const HistogramData o = make_histogram({-5, 0.5, 9}, {0, 1, 2});
  CHECK(o.bucket == std::vector<double>{0, 1});
  CHECK(o.num == 3);
  CHECK(o.min == -5);
  CHECK(o.max == 9);
}

TEST_CASE("uniform_bin_edges follows numpy.linspace over the data's range") {
  CHECK(uniform_bin_edges({0, 1}, 4) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(uniform_bin_edges({2, 2}, 2) == std::vector<double>{1.5, 2, 2.5});  // widened by 0.5
  CHECK_THROWS_WITH_AS(uniform_bin_edges({1, 2}, 0), "`bins` must be positive, when an integer", ember::Error);
  CHECK_THROWS_WITH_AS(uniform_bin_edges({1, std::numeric_limits<double>::infinity()}, 3),
                       "autodetected range of [1, inf] is not finite", ember::Error);
  CHECK_THROWS_AS(uniform_bin_edges({1, std::nan("")}, 3), ember::Error);
}

TEST_CASE("make_histogram rejects what PyTorch rejects") {
  CHECK_THROWS_WITH_AS(make_histogram({}, {0, 1}), "The input has no element.", ember::Error);
  CHECK_THROWS_WITH_AS(make_histogram({1}, {1, 0}), "`bins` must increase monotonically, when an array",
                       ember::Error);
  // Every value outside the edges: nothing to show.
  CHECK_THROWS_WITH_AS(make_histogram({9}, {0, 1, 2}), "The histogram is empty, please file a bug report.",
                       ember::Error);
  // NaN is in no bucket, and makes min/max NaN (numpy's min/max propagate it).
  const HistogramData h = make_histogram({std::nan(""), 0.5}, {0, 1});
  CHECK(h.bucket == std::vector<double>{0, 1});
  CHECK(std::isnan(h.min));
  CHECK(std::isnan(h.sum));
}
