// SGD's step for one parameter on the CPU (optim/sgd.cpp): the fused pass over core/ops/
// optim_math.h's sgd_element, the formula the CUDA kernel runs too, and the tensor-op step it
// reproduces. Internal to the optimizer and its tests; kept out of sgd.h, which every user of
// ember.h includes.
#pragma once

#include "ember/optim/sgd.h"

namespace ember::optim::detail {

/// SGD's step for one parameter (`state` holds its momentum buffer, made on its first momentum
/// step). Dense float32/float64 CPU tensors take one fused pass of sgd_element; anything else
/// (16-bit dtypes, strided or aliased tensors) runs sgd_step_reference, whose results the fused
/// pass reproduces.
void sgd_step(Tensor& param, const Tensor& grad, SGDParamState& state, const SGDOptions& options);
/// sgd_step through the tensor ops only, PyTorch's _single_tensor_sgd op for op (the oracle of
/// the fused pass's tests).
void sgd_step_reference(Tensor& param, const Tensor& grad, SGDParamState& state, const SGDOptions& options);

}  // namespace ember::optim::detail
