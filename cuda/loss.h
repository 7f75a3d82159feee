// The CUDA kernels of the losses with kernels of their own (core/ops/loss.cpp): nll_loss, its
// backward and the target check before them, and binary_cross_entropy's elementwise forward.
// The other losses are composites of ops that have CUDA kernels. Plain C++ declarations,
// defined in cuda/loss.cu (cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include <cstdint>

#include "ember/core/tensor.h"
#include "ember/cuda/loss_plan.h"

namespace ember::cuda {

/// nll_loss's geometry: the input viewed as (n, c, s), targets n * s.
struct NllShape {
  int64_t n = 1, c = 1, s = 1;
};

/// The target check and mean's divisor (cuda/loss_plan.h's NllStats) of a dense int64 CUDA
/// target, with class weights `weight` (dense, n_classes values, of the input's floating
/// dtype) or undefined for none. Deterministic; one host synchronisation, for the result.
NllStats nll_target_stats(const Tensor& target, const Tensor& weight, int64_t n_classes,
                          int64_t ignore_index);

/// out = nll_loss(x): per target for reduction None (out has the target's numel), else the
/// sum, divided by total_weight for Mean, into the one element of out. x dense, targets in
/// range (checked by nll_target_stats); reduction as core/ops/loss.h's Reduction codes.
/// The sum is a deterministic two-pass fold in double, as the CPU sums in double.
void nll_loss_forward(const Tensor& x, const Tensor& target, const Tensor& weight, NllShape shape,
                      int64_t reduction, int64_t ignore_index, double total_weight, const Tensor& out);
/// grad_input = 0 except grad_input[n, t, s] = -weight[t] * grad (/ total_weight for Mean),
/// grad per target for None, else grad's one element. grad dense, grad_input dense (x's
/// shape and dtype). Each target writes its own element: no atomics.
void nll_loss_backward(const Tensor& grad, const Tensor& target, const Tensor& weight, NllShape shape,
                       int64_t reduction, int64_t ignore_index, double total_weight,
                       const Tensor& grad_input);

/// out = (t - 1) max(log(1 - x), -100) - t max(log x, -100) elementwise, x, t and out of one
/// floating dtype and shape (any strides).
void binary_cross_entropy(const Tensor& x, const Tensor& t, const Tensor& out);

}  // namespace ember::cuda
