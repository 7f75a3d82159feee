// F::fold and F::unfold (torch.nn.functional's), col2im and im2col of core/ops/fold.h with
// Python's rank checks.
#pragma once

#include "ember/core/ops/fold.h"
#include "ember/nn/options/fold.h"

namespace ember {
namespace nn {
namespace functional {

/// (N, C * kh * kw, L) or (C * kh * kw, L) columns summed into (N, C, H, W) / (C, H, W).
inline Tensor fold(const Tensor& input, const FoldFuncOptions& options) {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3,
              "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got ",
              input.dim(), "D)");
  return ember::col2im(input, options.output_size(), options.kernel_size(), options.dilation(),
                       options.padding(), options.stride());
}

/// (N, C, H, W) or (C, H, W) -> the sliding blocks as columns (N, C * kh * kw, L).
inline Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4,
              "Input Error: Only 3D or 4D input Tensors are supported (got ", input.dim(), "D)");
  return ember::im2col(input, options.kernel_size(), options.dilation(), options.padding(), options.stride());
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
