// F::layer_norm, F::group_norm, F::local_response_norm and F::normalize (torch.nn.functional's),
// calling the ops of core/ops/normalization.h.
#pragma once

#include "ember/core/ops/normalization.h"
#include "ember/core/ops/padding.h"
#include "ember/core/ops/pooling.h"
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

/// input / (k + alpha * mean of input^2 over `size` neighbouring channels)^beta, the window
/// of channel c being [c - size / 2, c + (size - 1) / 2], zero outside: PyTorch's composite
/// (zero padding, then an average pool of kernel (size, 1) over (N, 1, C, rest)).
inline Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options) {
  const int64_t dim = input.dim(), size = options.size();
  EMBER_CHECK(dim >= 3, "Expected 3D or higher dimensionality input (got ", dim, " dimensions)");
  if (input.numel() == 0) return input;
  Tensor div = (input * input).reshape({input.size(0), 1, input.size(1), -1});
  div = ember::constant_pad_nd(div, {0, 0, size / 2, (size - 1) / 2}, 0);
  div = ember::avg_pool2d(div, {size, 1}, 1).view(input.sizes());
  return input / (div * options.alpha() + options.k()).pow(options.beta());
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
