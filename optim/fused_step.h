// Which parameters an optimizer steps with the fused CUDA kernels (cuda/optim.h), and how
// they are grouped for them, and which take the fused CPU passes (core/cpu/adam.cpp, sgd.cpp):
// the checks and bookkeeping SGD, Adam and AdamW share. A
// parameter that does not qualify keeps the optimizer's per-tensor path.
#pragma once

#include <cstddef>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::optim::detail {

/// Whether t is a dense CPU tensor of like's dtype laid out like `like` (same sizes, contiguous).
inline bool cpu_dense_like(const Tensor& t, const Tensor& like) {
  return t.defined() && !t.is_cuda() && t.dtype() == like.dtype() && t.is_contiguous() &&
         t.sizes().equals(like.sizes());
}

/// Whether `param` and its gradient can go to the fused CUDA step: a contiguous CUDA tensor
/// of a floating dtype (float32, float64, float16, bfloat16) and a gradient of its device,
/// dtype and shape (any layout: the step reads a contiguous copy) that is not the parameter
/// itself.
bool cuda_fusable(const Tensor& param, const Tensor& grad);
/// Whether an existing state tensor can be updated in place by the fused step next to
/// `param`: contiguous, of its device, dtype and shape. An undefined state fits (the step
/// creates it).
bool cuda_state_fits(const Tensor& state, const Tensor& param);
/// The indices of `params` grouped by device and dtype, groups in order of first appearance
/// (each group is one call of the fused kernels).
std::vector<std::vector<size_t>> group_by_device_and_dtype(const std::vector<Tensor>& params);
/// Picks the items of `all` at `indices`.
template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<size_t>& indices) {
  std::vector<T> out;
  out.reserve(indices.size());
  for (size_t i : indices) out.push_back(all[i]);
  return out;
}
/// Marks tensors written by a fused step as modified (one version bump each, which
/// invalidates saved copies as the in-place ops' bumps would).
void bump_versions(const std::vector<Tensor>& written);

}  // namespace ember::optim::detail
