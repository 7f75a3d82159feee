// F::linear and F::bilinear (torch.nn.functional's), composed from matmul so autograd,
// double backward and every dtype come from the core ops.
#pragma once

#include "ember/core/tensor.h"

namespace ember {
namespace nn {
namespace functional {

/// y = input @ weight^T + bias; input [*, in], weight [out, in], bias [out] (optional).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});

/// y[*, o] = sum_ij input1[*, i] weight[o, i, j] input2[*, j] + bias[o].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = {});

}  // namespace functional
}  // namespace nn
}  // namespace ember
