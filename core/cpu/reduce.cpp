// Reduction geometry: which dims are kept, which are folded, coalesced.
#include "ember/core/cpu/reduce.h"

namespace ember::cpu {

ReduceGeometry reduce_geometry(const Tensor& x, uint64_t mask) {
  ReduceGeometry g;
  for (int64_t d = 0; d < x.dim(); ++d) {
    int64_t size = x.size(d), stride = x.stride(d);
    if (mask & (uint64_t{1} << d)) {
      g.n_red *= size;
      if (size == 1) continue;
      // Merge into the previous reduced dim when memory steps evenly across both.
      if (!g.red_sizes.empty() && g.red_strides.back() == stride * size) {
        g.red_sizes.back() *= size;
        g.red_strides.back() = stride;
      } else {
        g.red_sizes.push_back(size);
        g.red_strides.push_back(stride);
      }
    } else {
      g.kept_sizes.push_back(size);
      g.kept_strides.push_back(stride);
      g.n_out *= size;
    }
  }
  return g;
}

}  // namespace ember::cpu
