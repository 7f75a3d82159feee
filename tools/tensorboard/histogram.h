// The histogram SummaryWriter::add_histogram records, computed as PyTorch's
// torch.utils.tensorboard.summary.make_histogram does: numpy.histogram's binning (explicit
// edges, or `bins` equal-width bins over the data's range), optional subsampling to
// max_bins, then trimmed to the buckets that hold data, each bucket named by its right edge.
// Plain C++ (no protobuf), so it is tested in every build.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ember::tensorboard::detail {

/// The fields of TensorBoard's HistogramProto.
struct HistogramData {
  double min = 0;
  double max = 0;
  double num = 0;
  double sum = 0;
  double sum_squares = 0;
  std::vector<double> bucket_limit;  // right edge of each bucket
  std::vector<double> bucket;        // count of each bucket
};

/// PyTorch's bins="tensorflow" edges: -v ... -1e-12, 0, 1e-12 ... v for v = 1e-12 * 1.1^k
/// below 1e20 (1549 edges), built by the same repeated multiplication as PyTorch.
const std::vector<double>& tensorflow_bins();

/// numpy.histogram's edges for `bins` equal-width bins over [min, max] of `values` (widened
/// by 0.5 each way when min == max), as numpy.linspace computes them. Raises ember::Error for
/// bins < 1 or a range that is not finite.
std::vector<double> uniform_bin_edges(const std::vector<double>& values, int64_t bins);

/// The histogram of `values` over increasing `edges` (numpy's rule: each bin holds
/// edges[i] <= x < edges[i+1], the last one also x == edges.back(); values outside, and
/// NaN, are in no bin but still in min/max/num/sum/sum_squares). Raises ember::Error for no
/// values, fewer than 2 edges, or edges that decrease.
HistogramData make_histogram(const std::vector<double>& values, const std::vector<double>& edges,
                             std::optional<int64_t> max_bins = std::nullopt);

}  // namespace ember::tensorboard::detail
