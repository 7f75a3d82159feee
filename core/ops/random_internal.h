// Internal samplers shared by core/ops/random.cpp and the ops built on them (dropout).
#pragma once

#include "ember/core/tensor.h"

namespace ember::detail {

/// t.bernoulli_(p).mul_(on) in one pass where it can (dense CPU float/double, 0 < p < 1, no
/// history to record): the same Philox stream as bernoulli_ (element k from block
/// offset + k, 1 iff philox::uniform01 < p), so the same generator state gives the same mask,
/// on the CPU and on CUDA, as bernoulli_ would. `on` is converted to t's dtype.
Tensor& bernoulli_scaled_(Tensor& t, double p, double on);

/// bernoulli_(p) by the scalar loop, one Philox block per element: the oracle of the
/// vectorized sampler's tests (dense CPU tensors only).
Tensor& bernoulli_scalar_reference_(Tensor& t, double p);

}  // namespace ember::detail
