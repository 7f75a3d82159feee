// random_split's length rule (PyTorch's torch.utils.data.random_split).
#include "ember/data/datasets/subset.h"

#include <cmath>
#include <iostream>

namespace ember::data::datasets::detail {

std::vector<size_t> split_lengths(const std::vector<double>& lengths, size_t n) {
  double sum = 0;
  for (double l : lengths) sum += l;
  std::vector<size_t> counts;
  // As PyTorch: fractions when they sum to 1 (and that is not also a valid count list).
  if (std::fabs(sum - 1.0) <= 1e-9 && sum <= static_cast<double>(n)) {
    size_t assigned = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      EMBER_CHECK(lengths[i] >= 0 && lengths[i] <= 1, "Fraction at index ", i, " is not between 0 and 1");
      counts.push_back(static_cast<size_t>(std::floor(static_cast<double>(n) * lengths[i])));
      assigned += counts.back();
    }
    size_t remainder = n - assigned;
    for (size_t i = 0; i < remainder; ++i) counts[i % counts.size()] += 1;
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i] == 0)
        std::cerr << "UserWarning: Length of split at index " << i
                  << " is 0. This might result in an empty dataset.\n";
    return counts;
  }
  size_t total = 0;
  for (double l : lengths) {
    EMBER_CHECK(l >= 0 && std::floor(l) == l,
                "random_split: lengths must be non-negative integers or fractions "
                "summing to 1, got ",
                l);
    counts.push_back(static_cast<size_t>(l));
    total += counts.back();
  }
  EMBER_CHECK(total == n, "Sum of input lengths does not equal the length of the input dataset!");
  return counts;
}

}  // namespace ember::data::datasets::detail
