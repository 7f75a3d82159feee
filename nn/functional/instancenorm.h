// F::instance_norm (torch.nn.functional's), over ember::instance_norm in
// core/ops/instance_norm.h, with Python's check that each instance has more than one value.
#pragma once

#include "ember/core/ops/instance_norm.h"
#include "ember/nn/options/instancenorm.h"

namespace ember {
namespace nn {
namespace functional {

/// Instance normalization of an (N, C, *) input; with use_input_stats the running
/// statistics, when defined, are updated in place.
inline Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {}) {
  if (options.use_input_stats()) {
    // One value per instance has no variance: PyTorch refuses it rather than return zeros.
    int64_t spatial = 1;
    for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
    EMBER_CHECK(spatial != 1, "Expected more than 1 spatial element when training, got input size ",
                input.sizes());
  }
  return ember::instance_norm(input, options.weight(), options.bias(), options.running_mean(),
                              options.running_var(), options.use_input_stats(), options.momentum(),
                              options.eps());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
