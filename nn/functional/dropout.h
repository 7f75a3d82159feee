// F::dropout, F::dropout1d/2d/3d, F::alpha_dropout, F::feature_alpha_dropout
// (torch.nn.functional's), calling the ops of core/ops/dropout.h.
#pragma once

#include "ember/core/ops/dropout.h"
#include "ember/nn/options/dropout.h"

namespace ember {
namespace nn {
namespace functional {

inline Tensor dropout(Tensor input, const DropoutFuncOptions& options = {}) {
  EMBER_CHECK(options.p() >= 0 && options.p() <= 1, "dropout probability has to be between 0 and 1, but got ",
              options.p());
  if (options.inplace()) return ember::dropout_(input, options.p(), options.training());
  return ember::dropout(input, options.p(), options.training());
}

namespace detail {
/// Channel dropout for inputs with `batched_dim` dims (N, C, spatial...) or, with one dim
/// fewer, a single unbatched sample (C, spatial...), as libtorch's C++ functional does.
inline Tensor feature_dropout_nd(Tensor input, const DropoutFuncOptions& options, int64_t batched_dim) {
  EMBER_CHECK(options.p() >= 0 && options.p() <= 1, "dropout probability has to be between 0 and 1, but got ",
              options.p());
  bool batched = input.dim() == batched_dim;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor result = options.inplace() ? ember::feature_dropout_(x, options.p(), options.training())
                                    : ember::feature_dropout(x, options.p(), options.training());
  if (batched) return result;
  // In place, input itself was written through the unsqueezed view.
  return options.inplace() ? input : result.squeeze(0);
}
}  // namespace detail

/// Zeroes whole channels of an (N, C, L) or unbatched (C, L) input.
inline Tensor dropout1d(Tensor input, const Dropout1dFuncOptions& options = {}) {
  return detail::feature_dropout_nd(std::move(input), options, 3);
}
/// Zeroes whole channels of an (N, C, H, W) or unbatched (C, H, W) input.
inline Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options = {}) {
  return detail::feature_dropout_nd(std::move(input), options, 4);
}
/// Zeroes whole channels of an (N, C, D, H, W) or unbatched (C, D, H, W) input.
inline Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options = {}) {
  return detail::feature_dropout_nd(std::move(input), options, 5);
}

inline Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options = {}) {
  return options.inplace() ? ember::alpha_dropout_(input, options.p(), options.training())
                           : ember::alpha_dropout(input, options.p(), options.training());
}

inline Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options = {}) {
  return options.inplace() ? ember::feature_alpha_dropout_(input, options.p(), options.training())
                           : ember::feature_alpha_dropout(input, options.p(), options.training());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
