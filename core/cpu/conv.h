// Convolution on the CPU: the three kernels every conv op reduces to (forward, input
// gradient = transposed convolution, weight gradient), written as im2col/col2im plus one
// cpu::gemm per image and group, and a plain direct loop the tests use as the oracle.
// 1-d convolutions run here as 2-d ones of height 1.
#pragma once

#include <cstdint>

#include "ember/core/tensor.h"

namespace ember::cpu {

/// The geometry of one (non-transposed) 2-d convolution: input (N, C, H, W) convolved with
/// weight (O, C / groups, KH, KW) gives output (N, O, OH, OW). A transposed convolution is
/// described by the convolution it is the input-gradient of (its output is this `input`).
struct ConvShape {
  int64_t batch = 0, in_channels = 0, in_h = 1, in_w = 1;
  int64_t out_channels = 0, out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};

/// out = conv(x, w) + bias (bias per output channel; undefined for none). x, w, bias
/// contiguous; out contiguous (N, O, OH, OW), overwritten.
void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, const ConvShape& s);

/// grad_input = d<conv(x, w), g>/dx, i.e. the transposed convolution of g (N, O, OH, OW)
/// with w, plus bias per input channel of s when defined (conv_transpose's bias).
/// g, w contiguous; grad_input contiguous (N, C, H, W), overwritten.
void conv2d_backward_input(const Tensor& g, const Tensor& w, const Tensor& bias, Tensor& grad_input,
                           const ConvShape& s);

/// grad_weight = d<conv(x, w), g>/dw = sum over images of g_n im2col(x_n)^T.
/// x, g contiguous; grad_weight contiguous (O, C / groups, KH, KW), overwritten. The batch is
/// summed in fixed chunks, so the result does not depend on the thread count.
void conv2d_backward_weight(const Tensor& x, const Tensor& g, Tensor& grad_weight, const ConvShape& s);

/// Direct seven-loop convolution of 4-d tensors, accumulating in double: the tests' oracle.
/// Returns a tensor of x's dtype.
Tensor conv2d_reference(const Tensor& x, const Tensor& w, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, int64_t groups);

/// Direct transposed convolution (scatter form) of 4-d tensors, weight (C_in, C_out / groups,
/// KH, KW), accumulating in double: the tests' oracle for conv_transpose2d.
Tensor conv_transpose2d_reference(const Tensor& x, const Tensor& w, const Tensor& bias, IntArrayRef stride,
                                  IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                  IntArrayRef dilation);

}  // namespace ember::cpu
