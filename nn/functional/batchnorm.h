// F::batch_norm (torch.nn.functional's), calling ember::batch_norm in core/ops/normalization.h.
#pragma once

#include "ember/core/ops/normalization.h"
#include "ember/nn/options/batchnorm.h"

namespace ember {
namespace nn {
namespace functional {

/// Batch normalization of an (N, C, *) input. With training(true) the running statistics,
/// when defined, are updated in place.
inline Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                         const BatchNormFuncOptions& options = {}) {
  if (options.training()) {
    // One value per channel has no variance: PyTorch refuses it rather than return NaNs.
    int64_t per_channel = input.dim() > 0 ? input.size(0) : 1;
    for (int64_t d = 2; d < input.dim(); ++d) per_channel *= input.size(d);
    EMBER_CHECK(per_channel != 1, "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
  }
  EMBER_CHECK(options.momentum().has_value(), "batch_norm: momentum must be a number");
  return ember::batch_norm(input, options.weight(), options.bias(), running_mean, running_var,
                           options.training(), *options.momentum(), options.eps());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
