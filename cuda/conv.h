// Convolution on CUDA: the three calls ember's conv ops (core/ops/conv.cpp) reduce to, the
// counterparts of core/cpu/conv.h, all through cuDNN. Plain C++ declarations; defined in
// cuda/conv.cpp (cuDNN), cuda/conv_no_cudnn.cpp (a CUDA build configured with
// -DEMBER_CUDNN=OFF) or cuda/no_cuda.cpp (no CUDA).
//
// Each works on contiguous tensors of one device and one floating dtype (float32, float64,
// float16, bfloat16; the 16-bit ones compute in float), 3-d (N, C, L: a 1-d convolution, run
// as 2-d of height 1) or 4-d (N, C, H, W), and overwrites `out`, which the caller allocated
// with its final sizes. `args` describe the plain convolution C in 2-d form
// (cuda/conv_plan.h). Convolution on CUDA needs cuDNN: with
// ember::backends::cudnn::enabled false they raise (ember has no other CUDA convolution).
#pragma once

#include "ember/cuda/conv_plan.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out = C(x; w) + bias: x (N, C, *), w (O, C / groups, *), out (N, O, *); bias (O) or
/// undefined.
void conv_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvArgs2d& args);

/// out = C^T(x; w) + bias, the transposed convolution: x has C's output sizes (N, O, *), out
/// C's input sizes (N, C, *), which fix the output padding; bias (C) or undefined.
void conv_transpose(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                    const ConvArgs2d& args);

/// out = Wgrad(x, g) = d<C(x; w), g>/dw, the weight gradient: x (N, C, *), g (N, O, *) with at
/// most C(x; w)'s sizes, out (O, C / groups, *).
void conv_backward_weight(const Tensor& out, const Tensor& x, const Tensor& g, const ConvArgs2d& args);

}  // namespace ember::cuda
