// Embedding lookup (rows of a weight matrix chosen by integer indices) with ATen's signature
// and gradient options, the max_norm renormalisation behind F::embedding, and one_hot.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// weight[indices]: output shape indices.sizes() + [embedding_dim]. The rows at padding_idx
/// (>= 0; -1 means none) receive no gradient; scale_grad_by_freq divides each row's gradient
/// by how often its index occurs in the batch. `sparse` is accepted for libtorch
/// compatibility; ember has no sparse tensors, so the gradient is dense either way.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
/// The weight gradient of embedding, built from public ops (so it is differentiable).
Tensor embedding_dense_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq);
/// Bags of embedding rows reduced to one vector each (torch.embedding_bag's output): indices
/// (1-d, int64/int32) split into bags at `offsets` (1-d, starting at 0; with
/// include_last_offset its last entry ends the last bag); mode 0 sums (each row times its
/// per_sample_weights entry, if given), 1 averages, 2 takes the elementwise max; an empty bag
/// gives zeros. Entries equal to padding_idx (>= 0; -1: none) are left out of their bag. Built
/// from embedding and index_put, so it is differentiable in weight and per_sample_weights.
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     bool scale_grad_by_freq = false, int64_t mode = 0, bool sparse = false,
                     const Tensor& per_sample_weights = {}, bool include_last_offset = false,
                     int64_t padding_idx = -1);
/// Rescales, in place and unrecorded, the rows of self named by indices whose norm_type-norm
/// exceeds max_norm to norm max_norm (PyTorch's embedding_renorm_).
Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type);
/// int64 tensor of shape self.sizes() + [num_classes] with a 1 at each class value;
/// num_classes = -1 means max(self) + 1.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

}  // namespace ember
