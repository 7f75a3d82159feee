// im2col / col2im (ATen's names; F::unfold and F::fold): the sliding k_h x k_w blocks of an
// image laid out as columns, and the sum of such columns back into an image. Composites of
// constant padding, index_select and index_add over one index table, so each is the other's
// adjoint and autograd (every order) and every device come with them.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// (N, C, H, W) or (C, H, W) -> (N, C * kh * kw, L) or (C * kh * kw, L), L the number of
/// block positions; row c * kh * kw + i * kw + j holds kernel tap (i, j) of channel c.
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride);

/// (N, C * kh * kw, L) or (C * kh * kw, L) -> (N, C, output_size) or (C, output_size):
/// every column added back at its block position (overlaps sum).
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);

}  // namespace ember
