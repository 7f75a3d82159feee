// CPU kernels of batch, layer and group normalization: one pass for each channel's (or
// row's) mean and variance, accumulated in double, then a fused scale-and-shift pass; the
// backward passes compute all three gradients in two sweeps. Inputs are contiguous; the ops
// in core/ops/normalization.cpp do the shape checks and autograd.
#pragma once

#include "ember/core/tensor.h"

namespace ember::cpu {

/// Batch norm sees its input as [N, C, S] (S: the spatial sizes multiplied); statistics are
/// per channel c, over the N * S elements of that channel.
struct ChannelGeom {
  int64_t N, C, S;
};

/// mean[c] and biased var[c] of contiguous x, as float64 tensors of size C.
void batch_norm_stats(const Tensor& x, const ChannelGeom& g, Tensor& mean, Tensor& var);

/// out = (x - mean[c]) * rstd[c] * w[c] + b[c]; w and b may be undefined (1 and 0).
/// mean and rstd are float64 of size C.
void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                      const Tensor& b, const ChannelGeom& g, Tensor& out);

/// Gradients of batch norm for the gradient `go` of its output. With batch statistics the
/// mean and rstd depend on x (PyTorch's native_batch_norm_backward with train=true):
///   gi = w rstd (go - mean(go) - xhat mean(go xhat)),  xhat = (x - mean) rstd;
/// without (eval), gi = go w rstd. gw = sum(go xhat), gb = sum(go), per channel.
/// Undefined gi/gw/gb are not computed; defined ones arrive allocated and contiguous.
void batch_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                         const Tensor& w, bool batch_stats, const ChannelGeom& g, Tensor& gi, Tensor& gw,
                         Tensor& gb);

/// Layer and group norm see the input as R rows of D elements, normalised row by row.
/// The affine parameters have G * (D / S) elements: row r uses block (r % G), and each
/// parameter covers S consecutive elements of the row. Layer norm: G = 1, S = 1 (one
/// parameter per element); group norm: rows are (n, group), G groups, S spatial elements.
struct RowGeom {
  int64_t R, D, G, S;
  int64_t per_row() const { return D / S; }  // affine parameters one row uses
};

/// mean[r] and rstd[r] = 1 / sqrt(var[r] + eps) (float64, size R).
void row_norm_stats(const Tensor& x, const RowGeom& g, double eps, Tensor& mean, Tensor& rstd);

/// out = (x - mean[r]) * rstd[r] * w[k] + b[k]; w and b may be undefined.
void row_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                    const RowGeom& g, Tensor& out);

/// row_norm_stats then row_norm_apply, fused per row where it can (layer norm with weight and
/// bias); fills mean and rstd as row_norm_stats does.
void row_norm_forward(const Tensor& x, double eps, const Tensor& w, const Tensor& b, const RowGeom& g, Tensor& mean,
                      Tensor& rstd, Tensor& out);

/// Gradients of row normalization (PyTorch's layer_norm / group_norm backward):
///   gi = rstd (gh - mean(gh) - xhat mean(gh xhat)) over the row, gh = go w[k];
///   gw[k] = sum(go xhat), gb[k] = sum(go) over the elements parameter k covers.
void row_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                       const Tensor& w, const RowGeom& g, Tensor& gi, Tensor& gw, Tensor& gb);

}  // namespace ember::cpu
