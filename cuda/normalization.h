// Batch, layer and group normalization on CUDA tensors: the CUDA twins of the kernels in
// core/cpu/normalization.h, with the same geometry, formulas and float64 statistics (see
// that header). Plain C++ declarations; the kernels are in cuda/normalization.cu
// (cuda/no_cuda.cpp in a build without CUDA), laid out by cuda/norm_plan.h. Every tensor is
// dense and on x's device; mean, var and rstd are float64; w and b may be undefined. Sums
// run in double in an order fixed by the shapes (two-stage reductions, no atomics), so
// results are bitwise reproducible.
#pragma once

namespace ember {
class Tensor;
namespace cpu {
struct ChannelGeom;
struct RowGeom;
}  // namespace cpu
}  // namespace ember

namespace ember::cuda {

/// mean[c] and biased var[c] of x seen as [N, C, S] (shifted sums around each channel's first
/// element, as on the CPU).
void batch_norm_stats(const Tensor& x, const cpu::ChannelGeom& g, const Tensor& mean, const Tensor& var);

/// out = x * scale[c] + shift[c], scale = w[c] rstd[c], shift = b[c] - mean[c] scale.
void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                      const cpu::ChannelGeom& g, const Tensor& out);

/// gi, gw, gb of batch norm (cpu::batch_norm_backward's formulas); undefined ones are skipped.
void batch_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         bool batch_stats, const cpu::ChannelGeom& g, const Tensor& gi, const Tensor& gw,
                         const Tensor& gb);

/// mean[r] and rstd[r] = 1 / sqrt(var[r] + eps) of each row.
void row_norm_stats(const Tensor& x, const cpu::RowGeom& g, double eps, const Tensor& mean, const Tensor& rstd);

/// row_norm_stats and row_norm_apply in one kernel (each row's statistics, then its outputs).
void row_norm_forward(const Tensor& x, double eps, const Tensor& w, const Tensor& b, const cpu::RowGeom& g,
                      const Tensor& mean, const Tensor& rstd, const Tensor& out);

/// out = (x - mean[r]) rstd[r] w[k] + b[k], with the CPU's two forms (see row_norm_apply there).
void row_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                    const cpu::RowGeom& g, const Tensor& out);

/// gi, gw, gb of layer / group norm (cpu::row_norm_backward's formulas); undefined ones skipped.
void row_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                       const cpu::RowGeom& g, const Tensor& gi, const Tensor& gw, const Tensor& gb);

}  // namespace ember::cuda
