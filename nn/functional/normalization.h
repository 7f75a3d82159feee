// F::layer_norm, F::group_norm and F::normalize (torch.nn.functional's), calling the ops of
// core/ops/normalization.h.
#pragma once

#include "ember/core/ops/normalization.h"
#include "ember/core/ops/reduce.h"
#include "ember/nn/options/normalization.h"

namespace ember {
namespace nn {
namespace functional {

inline Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return ember::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(),
                           options.eps());
}

inline Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options) {
  return ember::group_norm(input, options.num_groups(), options.weight(), options.bias(), options.eps());
}

/// input / max(||input||_p over dim, eps), the norm broadcast back along dim.
inline Tensor normalize(const Tensor& input, NormalizeFuncOptions options = {}) {
  int64_t dim = options.dim();
  Tensor denom =
      input.norm(options.p(), IntArrayRef(dim), /*keepdim=*/true).clamp_min(options.eps()).expand_as(input);
  Tensor result = input / denom;
  if (!options.out()) return result;
  Tensor out = *options.out();
  out.copy_(result);
  return out;
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
