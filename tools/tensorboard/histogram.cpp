// Histogram binning for add_histogram (histogram.h). Compiled with -ffp-contract=off
// (cmake/tensorboard.cmake) so linspace's i * step + start rounds twice, as numpy's does.
#include "ember/tools/tensorboard/histogram.h"

#include <algorithm>
#include <cmath>

#include "ember/core/error.h"

namespace ember::tensorboard::detail {

namespace {

// Python's a[from:to] for 0 <= from, to (clamped to the vector, empty when to <= from).
std::vector<double> py_slice(const std::vector<double>& a, int64_t from, int64_t to) {
  const auto n = static_cast<int64_t>(a.size());
  from = std::min(from, n);
  to = std::min(to, n);
  if (to <= from) return {};
  return {a.begin() + from, a.begin() + to};
}

// Bin counts under numpy's explicit-edges rule (see make_histogram in histogram.h).
std::vector<double> count_bins(const std::vector<double>& values, const std::vector<double>& edges) {
  const auto nbins = static_cast<int64_t>(edges.size()) - 1;
  std::vector<double> counts(static_cast<size_t>(nbins), 0.0);
  for (double x : values) {
    int64_t i = std::upper_bound(edges.begin(), edges.end(), x) - edges.begin() - 1;
    if (x == edges.back()) i = nbins - 1;  // the last bin is closed on the right
    if (i >= 0 && i < nbins) counts[static_cast<size_t>(i)] += 1.0;
  }
  return counts;
}

// PyTorch's max_bins: sums groups of num_bins / max_bins neighbouring bins (the last group
// padded with empty bins), keeping every group's left edge and the last right edge.
void subsample(std::vector<double>& counts, std::vector<double>& limits, int64_t max_bins) {
  const auto num_bins = static_cast<int64_t>(counts.size());
  const int64_t group = num_bins / max_bins;
  const int64_t groups = (num_bins + group - 1) / group;
  std::vector<double> new_counts(static_cast<size_t>(groups), 0.0);
  std::vector<double> new_limits(static_cast<size_t>(groups) + 1);
  for (int64_t i = 0; i < num_bins; ++i) new_counts[static_cast<size_t>(i / group)] += counts[static_cast<size_t>(i)];
  for (int64_t g = 0; g < groups; ++g) new_limits[static_cast<size_t>(g)] = limits[static_cast<size_t>(g * group)];
  new_limits.back() = limits.back();
  counts = std::move(new_counts);
  limits = std::move(new_limits);
}

}  // namespace

const std::vector<double>& tensorflow_bins() {
  static const std::vector<double> bins = [] {
    std::vector<double> pos;
    for (double v = 1e-12; v < 1e20; v *= 1.1) pos.push_back(v);
    std::vector<double> all;
    all.reserve(2 * pos.size() + 1);
    for (auto it = pos.rbegin(); it != pos.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), pos.begin(), pos.end());
    return all;
  }();
  return bins;
}

std::vector<double> uniform_bin_edges(const std::vector<double>& values, int64_t bins) {
  EMBER_CHECK(bins >= 1, "`bins` must be positive, when an integer");
  double first = 0.0, last = 1.0;  // numpy's range for no values
  if (!values.empty()) {
    first = last = values[0];
    for (double x : values) {
      // min/max propagate NaN, as numpy's do, so the range check below reports it.
      if (std::isnan(x) || std::isnan(first)) {
        first = last = std::nan("");
        break;
      }
      first = std::min(first, x);
      last = std::max(last, x);
    }
  }
  EMBER_CHECK(std::isfinite(first) && std::isfinite(last), "autodetected range of [", first, ", ", last,
              "] is not finite");
  if (first == last) {
    first -= 0.5;
    last += 0.5;
  }
  // numpy.linspace(first, last, bins + 1): i * step + first, the last edge exactly `last`.
  const double step = (last - first) / static_cast<double>(bins);
  std::vector<double> edges(static_cast<size_t>(bins) + 1);
  for (int64_t i = 0; i <= bins; ++i) edges[static_cast<size_t>(i)] = static_cast<double>(i) * step + first;
  edges.back() = last;
  return edges;
}

HistogramData make_histogram(const std::vector<double>& values, const std::vector<double>& edges,
                             std::optional<int64_t> max_bins) {
  EMBER_CHECK(!values.empty(), "The input has no element.");
  EMBER_CHECK(edges.size() >= 2, "add_histogram: bins must hold at least 2 edges, got ", edges.size());
  for (size_t i = 1; i < edges.size(); ++i)
    EMBER_CHECK(!(edges[i - 1] > edges[i]), "`bins` must increase monotonically, when an array");
  EMBER_CHECK(!max_bins || *max_bins >= 1, "add_histogram: max_bins must be positive, got ", max_bins.value_or(0));

  std::vector<double> counts = count_bins(values, edges);
  std::vector<double> limits = edges;
  if (max_bins && static_cast<int64_t>(counts.size()) > *max_bins) subsample(counts, limits, *max_bins);

  // The buckets from the first to the last non-empty one. TensorBoard keeps right edges only,
  // so the bucket left of the first non-empty one stays (empty, or a zero is prepended) to
  // carry that bucket's left edge. Indices as PyTorch computes them from cumsum(counts > 0).
  int64_t nonempty = 0;
  for (double c : counts) nonempty += c > 0;
  int64_t start = 0;  // leading empty buckets
  while (start < static_cast<int64_t>(counts.size()) && counts[static_cast<size_t>(start)] == 0) ++start;
  int64_t end = 0;  // buckets before the last non-empty one, plus one
  for (int64_t seen = 0; end < static_cast<int64_t>(counts.size()); ++end) {
    seen += counts[static_cast<size_t>(end)] > 0;
    if (seen > nonempty - 1) break;
  }
  end += 1;

  HistogramData h;
  if (start > 0) {
    h.bucket = py_slice(counts, start - 1, end);
  } else {
    h.bucket = py_slice(counts, 0, end);
    h.bucket.insert(h.bucket.begin(), 0.0);
  }
  h.bucket_limit = py_slice(limits, start, end + 1);
  EMBER_CHECK(!h.bucket.empty() && !h.bucket_limit.empty(), "The histogram is empty, please file a bug report.");

  h.num = static_cast<double>(values.size());
  h.min = h.max = values[0];
  for (double x : values) {
    if (std::isnan(x) || std::isnan(h.min)) {
      h.min = h.max = std::nan("");
    } else {
      h.min = std::min(h.min, x);
      h.max = std::max(h.max, x);
    }
    h.sum += x;
    h.sum_squares += x * x;
  }
  return h;
}

}  // namespace ember::tensorboard::detail
