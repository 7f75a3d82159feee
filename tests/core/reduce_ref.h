// Plain reference loops for the reduction tests: group a tensor's elements by output
// position (the kept dims) and fold each group with ordinary C++ on doubles.
#pragma once

#include <functional>
#include <vector>

#include "op_check.h"

namespace ember::test {

/// For each output of a reduction of x over `dims` (empty = all), in row-major output order,
/// the reduced elements in row-major order.
inline std::vector<std::vector<double>> reduce_groups(const Tensor& x, std::vector<int64_t> dims) {
  int64_t nd = x.dim();
  std::vector<bool> red(nd, dims.empty());
  for (int64_t d : dims) red[d < 0 ? d + nd : d] = true;
  int64_t n_out = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!red[d]) n_out *= x.size(d);
  std::vector<std::vector<double>> groups(n_out);
  std::vector<double> v = values(x);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    int64_t rem = i, o = 0, scale = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      int64_t idx = rem % x.size(d);
      rem /= x.size(d);
      if (!red[d]) {
        o += idx * scale;
        scale *= x.size(d);
      }
    }
    groups[o].push_back(v[i]);
  }
  return groups;
}

/// f applied to each output's group of reduced elements.
inline std::vector<double> ref_reduce(const Tensor& x, std::vector<int64_t> dims,
                                      const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> out;
  for (const auto& g : reduce_groups(x, std::move(dims))) out.push_back(f(g));
  return out;
}

/// The lines of x along `dim`, each in order, lines in row-major order of the other dims.
inline std::vector<std::vector<double>> lines_along(const Tensor& x, int64_t dim) {
  Tensor moved = x.dim() == 0 ? x.reshape({1}) : x.movedim(dim, -1);
  return reduce_groups(moved.contiguous(), {moved.dim() - 1});
}

}  // namespace ember::test
