// CUDA batch, layer and group normalization (cuda/normalization.h), following the plans of
// cuda/norm_plan.h and the CPU's arithmetic (core/cpu/normalization.cpp): statistics from
// shifted sums in double, outputs and input gradients in opmath_t from coefficients computed
// in double, each with the CPU's functor (core/ops/normalization_math.h). Three kinds of kernel:
//   row kernels      layer / group norm rows: statistics (and the output in the same pass
//                    over the block's row), the output from given statistics, the input
//                    gradient;
//   channel sums     two sums per channel of a [N, K, S] tensor, in two stages (partials per
//                    chunk of N, then each channel's partials in order), finished by a functor
//                    that writes statistics, parameter gradients or per-channel coefficients;
//   channel affine   batch norm's output x k1 + k2 and input gradient go k1 + x k2 + k3 from
//                    per-channel coefficients.
#include <cuda_runtime.h>

#include <cstdint>

#include "ember/core/cpu/normalization.h"
#include "ember/core/ops/normalization_math.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/norm_plan.h"
#include "ember/cuda/normalization.h"
#include "ember/cuda/reduce.cuh"
#include "ember/cuda/row_reduce.cuh"

namespace ember::cuda {
namespace {

// ---- shared pieces -----------------------------------------------------------------------------

/// A stored element as double, through opmath_t as the CPU's as_double.
template <class T>
__device__ __forceinline__ double as_double(const device_t<T>* p) {
  return static_cast<double>(load_opmath<T>(p));
}

/// The parameter at k as double, or `dflt` when the parameter is absent.
template <class T>
__device__ __forceinline__ double param(const device_t<T>* p, int64_t k, double dflt) {
  return p != nullptr ? as_double<T>(p + k) : dflt;
}

/// Two sums folded together (a + b is commutative bitwise, as the folds need).
struct Sums {
  double a, b;
};
struct SumsOp {
  __device__ Sums operator()(const Sums& x, const Sums& y) const { return {x.a + y.a, x.b + y.b}; }
};

template <class T>
const device_t<T>* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const device_t<T>*>(t.data_ptr()) : nullptr;
}
template <class T>
device_t<T>* mutable_or_null(const Tensor& t) {
  return t.defined() ? static_cast<device_t<T>*>(t.data_ptr()) : nullptr;
}

/// The element's parameter block within its row: d / S, in 32-bit arithmetic when it fits.
__device__ __forceinline__ int64_t block_of(int64_t d, int64_t S, bool small) {
  if (S == 1) return d;
  return small ? static_cast<int64_t>(static_cast<uint32_t>(d) / static_cast<uint32_t>(S)) : d / S;
}

// ---- row kernels (layer / group norm) --------------------------------------------------------

enum class RowMode { kStats, kForward, kApply };

template <class T>
struct RowArgs {
  const device_t<T>* x;
  const device_t<T>* w;  // nullptr: 1
  const device_t<T>* b;  // nullptr: 0
  device_t<T>* out;
  double* mean;
  double* rstd;
  int64_t R, D, G, S;
  double eps;
  bool small;  // D fits in 32 bits
};

/// The outputs of row r from its mean m and rstd rs: LayerNormAffineFn when every element has
/// its own weight and bias (S == 1, both present), else ScaleShiftFn with each parameter
/// block's affine_coefs, as the CPU's row_norm_apply.
template <class T>
__device__ __forceinline__ void apply_row(const RowArgs<T>& a, int64_t r, double m, double rs) {
  using M = opmath_t<T>;
  const int64_t D = a.D, P = a.S > 0 ? D / a.S : 0, k0 = (r % a.G) * P;
  const device_t<T>* xr = a.x + r * D;
  device_t<T>* orow = a.out + r * D;
  if (a.S == 1 && a.w != nullptr && a.b != nullptr) {
    const M mm = static_cast<M>(m), rr = static_cast<M>(rs);
    for (int64_t d = threadIdx.x; d < D; d += blockDim.x)
      orow[d] = to_stored<T>(LayerNormAffineFn{}(load_opmath<T>(xr + d), mm, rr, load_opmath<T>(a.w + k0 + d),
                                                 load_opmath<T>(a.b + k0 + d)));
    return;
  }
  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    const int64_t k = k0 + block_of(d, a.S, a.small);
    const AffineCoefs c = affine_coefs(param<T>(a.w, k, 1.0), param<T>(a.b, k, 0.0), m, rs);
    orow[d] = to_stored<T>(
        ScaleShiftFn{}(load_opmath<T>(xr + d), static_cast<M>(c.scale), static_cast<M>(c.shift)));
  }
}

/// Statistics of each row (kStats), statistics then outputs (kForward), or outputs from the
/// given statistics (kApply). Lanes of a row: threadIdx.x; rows of a block: threadIdx.y.
template <class T, RowMode Mode>
__global__ void __launch_bounds__(kNormBlockMaxThreads) row_norm_kernel(RowNormPlan plan, RowArgs<T> a) {
  __shared__ Sums smem[kNormBlockMaxThreads / 32];
  const int64_t D = a.D;
  for (int64_t u = blockIdx.x; u < plan.units; u += gridDim.x) {
    const int64_t r = plan.row(u, threadIdx.y);
    const bool active = r < a.R;  // a whole warp (or block) is active or not
    double m, rs;
    if constexpr (Mode == RowMode::kApply) {
      if (!active) continue;
      m = a.mean[r];
      rs = a.rstd[r];
    } else {
      const device_t<T>* xr = a.x + (active ? r : 0) * D;
      const double K = active && D > 0 ? as_double<T>(xr) : 0.0;
      Sums acc{0, 0};
      if (active)
        for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
          const double v = as_double<T>(xr + d) - K;
          acc.a += v;
          acc.b += v * v;
        }
      acc = row_allreduce(acc, SumsOp{}, smem);
      if (!active) continue;
      const NormMoments mo = shifted_moments(K, acc.a, acc.b, static_cast<double>(D));
      m = mo.mean;
      rs = norm_rstd(mo.var, a.eps);
      if (threadIdx.x == 0) {
        a.mean[r] = m;
        a.rstd[r] = rs;
      }
      if constexpr (Mode == RowMode::kStats) continue;
    }
    apply_row(a, r, m, rs);
  }
}

template <class T>
struct RowGradArgs {
  const device_t<T>* go;
  const device_t<T>* x;
  const device_t<T>* w;  // nullptr: 1
  const double* mean;
  const double* rstd;
  device_t<T>* gi;
  int64_t R, D, G, S;
  bool small;
};

/// gi = go w rs + x k2 + k3 per row (AffineGradFn), with A = sum(go w), B = sum(go w (x - m))
/// over the row: k2 = -rs^3 B / D, k3 = -rs A / D - k2 m (row_grad_coefs; the CPU's
/// row_input_grad).
template <class T>
__global__ void __launch_bounds__(kNormBlockMaxThreads) row_norm_input_grad(RowNormPlan plan, RowGradArgs<T> a) {
  using M = opmath_t<T>;
  __shared__ Sums smem[kNormBlockMaxThreads / 32];
  const int64_t D = a.D, P = a.S > 0 ? D / a.S : 0;
  for (int64_t u = blockIdx.x; u < plan.units; u += gridDim.x) {
    const int64_t r = plan.row(u, threadIdx.y);
    const bool active = r < a.R;
    const int64_t base = (active ? r : 0) * D, k0 = (active ? r % a.G : 0) * P;
    const double m = active ? a.mean[r] : 0.0, rs = active ? a.rstd[r] : 0.0;
    Sums acc{0, 0};
    if (active)
      for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
        const double wk = param<T>(a.w, k0 + block_of(d, a.S, a.small), 1.0), gv = as_double<T>(a.go + base + d);
        acc.a += wk * gv;
        acc.b += wk * (gv * (as_double<T>(a.x + base + d) - m));
      }
    acc = row_allreduce(acc, SumsOp{}, smem);
    if (!active) continue;
    const GradCoefs kc = row_grad_coefs(rs, m, acc.a, acc.b, static_cast<double>(D));
    const M b = static_cast<M>(kc.k2), c = static_cast<M>(kc.k3);
    for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
      const M k1 = static_cast<M>(param<T>(a.w, k0 + block_of(d, a.S, a.small), 1.0) * rs);
      a.gi[base + d] = to_stored<T>(
          AffineGradFn{}(load_opmath<T>(a.go + base + d), load_opmath<T>(a.x + base + d), k1, b, c));
    }
  }
}

template <class T>
void launch_rows(const RowNormPlan& p, RowMode mode, const RowArgs<T>& a) {
  const dim3 grid(static_cast<unsigned>(p.grid)), block(p.block_x, p.block_y);
  cudaStream_t stream = current_raw_stream();
  switch (mode) {
    case RowMode::kStats: row_norm_kernel<T, RowMode::kStats><<<grid, block, 0, stream>>>(p, a); break;
    case RowMode::kForward: row_norm_kernel<T, RowMode::kForward><<<grid, block, 0, stream>>>(p, a); break;
    case RowMode::kApply: row_norm_kernel<T, RowMode::kApply><<<grid, block, 0, stream>>>(p, a); break;
  }
  EMBER_CUDA_CHECK_LAUNCH();
}

/// One row kernel over x (any floating dtype) with the given statistics and parameters.
void run_rows(RowMode mode, const Tensor& x, const cpu::RowGeom& g, double eps, const Tensor& w, const Tensor& b,
              const Tensor& mean, const Tensor& rstd, const Tensor& out) {
  if (g.R == 0) return;
  DeviceGuard guard(x.device());
  RowNormPlan p = plan_row_norm(g.R, g.D);
  visit_float_dtype(x.dtype(), "layer_norm", [&]<typename T>() {
    RowArgs<T> a{static_cast<const device_t<T>*>(x.data_ptr()),
                 ptr_or_null<T>(w),
                 ptr_or_null<T>(b),
                 mutable_or_null<T>(out),
                 static_cast<double*>(mean.data_ptr()),
                 static_cast<double*>(rstd.data_ptr()),
                 g.R,
                 g.D,
                 g.G,
                 g.S,
                 eps,
                 g.D <= int64_t{0xffffffff}};
    launch_rows<T>(p, mode, a);
  });
}

// ---- channel sums --------------------------------------------------------------------------

/// Batch norm statistics: x - K and (x - K)^2, K the channel's first element (n = 0, s = 0).
template <class T>
struct BnStatsTerms {
  const device_t<T>* x;
  int64_t S;
  __device__ double context(int64_t k) const { return as_double<T>(x + k * S); }
  __device__ Sums term(double K, int64_t, int64_t, int64_t off) const {
    const double d = as_double<T>(x + off) - K;
    return {d, d * d};
  }
};

/// Batch norm gradient sums: go and go (x - mean[k]).
template <class T>
struct BnGradTerms {
  const device_t<T>* go;
  const device_t<T>* x;
  const double* mean;
  __device__ double context(int64_t k) const { return mean[k]; }
  __device__ Sums term(double m, int64_t, int64_t, int64_t off) const {
    const double gv = as_double<T>(go + off);
    return {gv, gv * (as_double<T>(x + off) - m)};
  }
};

/// Layer / group norm parameter gradient sums: go and go (x - mean[r]) rstd[r], with the
/// row r = n G + k / P of element (n, k, s).
template <class T>
struct RowParamTerms {
  const device_t<T>* go;
  const device_t<T>* x;
  const double* mean;
  const double* rstd;
  int64_t G, P;
  __device__ double context(int64_t) const { return 0.0; }
  __device__ Sums term(double, int64_t n, int64_t k, int64_t off) const {
    const int64_t r = n * G + k / P;
    const double gv = as_double<T>(go + off);
    return {gv, gv * (as_double<T>(x + off) - mean[r]) * rstd[r]};
  }
};

/// Stage 1: block (tile, split) folds its channels over the n of its chunk and writes
/// partials[split * K + k]. Columns: a tree over the block_y lanes of each channel; else a
/// tree over all the block's lanes (one channel).
template <class Terms>
__global__ void __launch_bounds__(kNormSumThreads) channel_sums_kernel(ChannelSumPlan p, Terms t, Sums* partials) {
  __shared__ Sums smem[kNormSumThreads];
  const int tx = threadIdx.x, ty = threadIdx.y, idx = ty * blockDim.x + tx;
  const int64_t split = blockIdx.y, k = p.channel(blockIdx.x, tx);
  const int64_t n0 = p.n_begin(split), n1 = p.n_end(split);
  Sums acc{0, 0};
  if (k < p.K && n0 < n1) {
    const double c = t.context(k);
    for (int64_t n = n0 + ty; n < n1; n += blockDim.y)
      for (int64_t s = p.columns ? 0 : tx; s < p.S; s += p.columns ? 1 : blockDim.x) {
        const Sums v = t.term(c, n, k, p.offset(n, k, s));
        acc.a += v.a;
        acc.b += v.b;
      }
  }
  smem[idx] = acc;
  __syncthreads();
  const int pos = p.columns ? ty : idx, stride = p.columns ? blockDim.x : 1;
  for (int h = (p.columns ? blockDim.y : blockDim.x * blockDim.y) / 2; h > 0; h /= 2) {
    if (pos < h) smem[idx] = SumsOp{}(smem[idx], smem[idx + h * stride]);
    __syncthreads();
  }
  if (pos == 0 && k < p.K) partials[split * p.K + k] = smem[idx];
}

/// Stage 2: each channel adds its `splits` partials in order and hands the sums to `finish`.
template <class Finish>
__global__ void channel_finish_kernel(int64_t K, int64_t splits, const Sums* partials, Finish finish) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < K;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Sums s{0, 0};
    for (int64_t i = 0; i < splits; ++i) s = SumsOp{}(s, partials[i * K + k]);
    finish(k, s);
  }
}

/// Runs `finish` over the sums of `terms` per channel of the dense [N, K, S] tensor (K > 0).
template <class Terms, class Finish>
void channel_sums(int64_t N, int64_t K, int64_t S, const Terms& terms, const Finish& finish, Device device) {
  ChannelSumPlan p = plan_channel_sums(N, K, S, sm_count());
  Tensor buf = device_scratch(p.splits * p.K * static_cast<int64_t>(sizeof(Sums)), device);
  Sums* partials = static_cast<Sums*>(buf.data_ptr());
  cudaStream_t stream = current_raw_stream();
  channel_sums_kernel<Terms><<<dim3(static_cast<unsigned>(p.tiles), static_cast<unsigned>(p.splits)),
                               dim3(p.block_x, p.block_y), 0, stream>>>(p, terms, partials);
  EMBER_CUDA_CHECK_LAUNCH();
  channel_finish_kernel<Finish><<<blocks_for(K), kThreads, 0, stream>>>(K, p.splits, partials, finish);
  EMBER_CUDA_CHECK_LAUNCH();
}

/// Runs `finish` with zero sums for every channel (nothing to add up).
template <class Finish>
void finish_only(int64_t K, const Finish& finish) {
  channel_finish_kernel<Finish><<<blocks_for(K), kThreads, 0, current_raw_stream()>>>(K, 0, nullptr, finish);
  EMBER_CUDA_CHECK_LAUNCH();
}

/// mean = K + s1 / count, var = max(s2 / count - (s1 / count)^2, 0), as batch_norm_stats.
template <class T>
struct BnStatsFinish {
  const device_t<T>* x;
  int64_t S;
  double count;
  double* mean;
  double* var;
  __device__ void operator()(int64_t k, const Sums& s) const {
    const double K = count > 0 ? as_double<T>(x + k * S) : 0.0;
    const NormMoments mo = shifted_moments(K, s.a, s.b, count);
    mean[k] = mo.mean;
    var[k] = mo.var;
  }
};

/// Batch norm's gw = sgx rs, gb = sg, and the input gradient's coefficients gi = k1 go + k2 x
/// + k3 (coef[3k..3k+2]); with batch statistics k2 = -k1 rs^2 sgx / count and
/// k3 = -k1 sg / count - k2 mean, as batch_norm_backward.
template <class T>
struct BnGradFinish {
  const double* mean;
  const double* rstd;
  const device_t<T>* w;
  device_t<T>* gw;
  device_t<T>* gb;
  double* coef;
  double count;
  bool batch_stats;
  __device__ void operator()(int64_t k, const Sums& s) const {
    const double rs = rstd[k];
    if (gw != nullptr) gw[k] = to_stored<T>(s.b * rs);
    if (gb != nullptr) gb[k] = to_stored<T>(s.a);
    if (coef == nullptr) return;
    const double k1 = param<T>(w, k, 1.0) * rs;
    const GradCoefs kc = batch_grad_coefs(k1, rs, mean[k], s.a, s.b, count, batch_stats);
    coef[3 * k] = k1;
    coef[3 * k + 1] = kc.k2;
    coef[3 * k + 2] = kc.k3;
  }
};

/// Layer / group norm's gw = sum(go xhat), gb = sum(go).
template <class T>
struct RowParamFinish {
  device_t<T>* gw;
  device_t<T>* gb;
  __device__ void operator()(int64_t k, const Sums& s) const {
    if (gw != nullptr) gw[k] = to_stored<T>(s.b);
    if (gb != nullptr) gb[k] = to_stored<T>(s.a);
  }
};

// ---- channel affine (batch norm's output and input gradient) ------------------------------

/// Batch norm's output coefficients (affine_coefs): scale = w rs, shift = b - mean scale
/// (coef[3c], [3c+1]).
template <class T>
__global__ void bn_apply_coef_kernel(int64_t C, const double* mean, const double* rstd, const device_t<T>* w,
                                     const device_t<T>* b, double* coef) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const AffineCoefs k = affine_coefs(param<T>(w, c, 1.0), param<T>(b, c, 0.0), mean[c], rstd[c]);
    coef[3 * c] = k.scale;
    coef[3 * c + 1] = k.shift;
    coef[3 * c + 2] = 0.0;
  }
}

/// Grad: out = go k1 + x k2 + k3 (AffineGradFn); else out = x k1 + k2 (ScaleShiftFn); channel
/// c = (i / S) % C, with the coefficients of channel c cast to opmath_t as the CPU's
/// scale_shift / affine_grad do.
template <class T, bool Grad, class Index>
__global__ void channel_affine_kernel(Index numel, Index C, Index S, const device_t<T>* a, const device_t<T>* x,
                                      const double* coef, device_t<T>* out) {
  using M = opmath_t<T>;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index c = (i / S) % C;
    const M k1 = static_cast<M>(coef[3 * c]), k2 = static_cast<M>(coef[3 * c + 1]);
    if constexpr (Grad)
      out[i] = to_stored<T>(
          AffineGradFn{}(load_opmath<T>(a + i), load_opmath<T>(x + i), k1, k2, static_cast<M>(coef[3 * c + 2])));
    else
      out[i] = to_stored<T>(ScaleShiftFn{}(load_opmath<T>(a + i), k1, k2));
  }
}

template <class T, bool Grad>
void launch_channel_affine(const cpu::ChannelGeom& g, const Tensor& a, const Tensor& x, const double* coef,
                           const Tensor& out) {
  const int64_t numel = out.numel();
  const auto* ap = static_cast<const device_t<T>*>(a.data_ptr());
  const device_t<T>* xp = Grad ? static_cast<const device_t<T>*>(x.data_ptr()) : nullptr;
  auto* op = static_cast<device_t<T>*>(out.data_ptr());
  cudaStream_t stream = current_raw_stream();
  // 32-bit indices while i + the grid's stride cannot wrap.
  if (numel <= int64_t{0x7fffffff}) {
    channel_affine_kernel<T, Grad, uint32_t><<<blocks_for(numel), kThreads, 0, stream>>>(
        static_cast<uint32_t>(numel), static_cast<uint32_t>(g.C), static_cast<uint32_t>(g.S), ap, xp, coef, op);
  } else {
    channel_affine_kernel<T, Grad, int64_t><<<blocks_for(numel), kThreads, 0, stream>>>(numel, g.C, g.S, ap, xp,
                                                                                      coef, op);
  }
  EMBER_CUDA_CHECK_LAUNCH();
}

/// A float64 scratch buffer of 3 coefficients per channel.
Tensor coef_buffer(int64_t C, Device device) { return device_scratch(3 * C * static_cast<int64_t>(sizeof(double)), device); }

}  // namespace

// ---- batch norm ----------------------------------------------------------------------------

void batch_norm_stats(const Tensor& x, const cpu::ChannelGeom& g, const Tensor& mean, const Tensor& var) {
  if (g.C == 0) return;
  DeviceGuard guard(x.device());
  visit_float_dtype(x.dtype(), "batch_norm", [&]<typename T>() {
    const auto* xp = static_cast<const device_t<T>*>(x.data_ptr());
    double count = static_cast<double>(g.N * g.S);
    channel_sums(g.N, g.C, g.S, BnStatsTerms<T>{xp, g.S},
                 BnStatsFinish<T>{xp, g.S, count, static_cast<double*>(mean.data_ptr()),
                                  static_cast<double*>(var.data_ptr())},
                 x.device());
  });
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                      const cpu::ChannelGeom& g, const Tensor& out) {
  if (out.numel() == 0) return;
  DeviceGuard guard(x.device());
  Tensor coef = coef_buffer(g.C, x.device());
  auto* cp = static_cast<double*>(coef.data_ptr());
  visit_float_dtype(x.dtype(), "batch_norm", [&]<typename T>() {
    bn_apply_coef_kernel<T><<<blocks_for(g.C), kThreads, 0, current_raw_stream()>>>(
        g.C, static_cast<const double*>(mean.data_ptr()), static_cast<const double*>(rstd.data_ptr()),
        ptr_or_null<T>(w), ptr_or_null<T>(b), cp);
    EMBER_CUDA_CHECK_LAUNCH();
    launch_channel_affine<T, false>(g, x, x, cp, out);
  });
}

void batch_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         bool batch_stats, const cpu::ChannelGeom& g, const Tensor& gi, const Tensor& gw,
                         const Tensor& gb) {
  if (g.C == 0) return;
  DeviceGuard guard(x.device());
  const bool need_gi = gi.defined() && gi.numel() > 0;
  Tensor coef = need_gi ? coef_buffer(g.C, x.device()) : Tensor();
  visit_float_dtype(x.dtype(), "batch_norm_backward", [&]<typename T>() {
    const auto* gp = static_cast<const device_t<T>*>(go.data_ptr());
    const auto* xp = static_cast<const device_t<T>*>(x.data_ptr());
    const auto* mp = static_cast<const double*>(mean.data_ptr());
    BnGradFinish<T> finish{mp,
                           static_cast<const double*>(rstd.data_ptr()),
                           ptr_or_null<T>(w),
                           mutable_or_null<T>(gw),
                           mutable_or_null<T>(gb),
                           need_gi ? static_cast<double*>(coef.data_ptr()) : nullptr,
                           static_cast<double>(g.N * g.S),
                           batch_stats};
    // Eval-mode input gradients need no sums (k2 = k3 = 0); everything else does.
    if (gw.defined() || gb.defined() || (need_gi && batch_stats))
      channel_sums(g.N, g.C, g.S, BnGradTerms<T>{gp, xp, mp}, finish, x.device());
    else if (need_gi)
      finish_only(g.C, finish);
    if (need_gi) launch_channel_affine<T, true>(g, go, x, static_cast<const double*>(coef.data_ptr()), gi);
  });
}

// ---- layer norm and group norm (rows) -----------------------------------------------------

void row_norm_stats(const Tensor& x, const cpu::RowGeom& g, double eps, const Tensor& mean, const Tensor& rstd) {
  run_rows(RowMode::kStats, x, g, eps, Tensor(), Tensor(), mean, rstd, Tensor());
}

void row_norm_forward(const Tensor& x, double eps, const Tensor& w, const Tensor& b, const cpu::RowGeom& g,
                      const Tensor& mean, const Tensor& rstd, const Tensor& out) {
  run_rows(RowMode::kForward, x, g, eps, w, b, mean, rstd, out);
}

void row_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                    const cpu::RowGeom& g, const Tensor& out) {
  if (out.numel() == 0) return;
  run_rows(RowMode::kApply, x, g, 0.0, w, b, mean, rstd, out);
}

void row_norm_backward(const Tensor& go, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                       const cpu::RowGeom& g, const Tensor& gi, const Tensor& gw, const Tensor& gb) {
  DeviceGuard guard(x.device());
  visit_float_dtype(x.dtype(), "layer_norm_backward", [&]<typename T>() {
    const auto* gp = static_cast<const device_t<T>*>(go.data_ptr());
    const auto* xp = static_cast<const device_t<T>*>(x.data_ptr());
    const auto* mp = static_cast<const double*>(mean.data_ptr());
    const auto* rp = static_cast<const double*>(rstd.data_ptr());
    if (gi.defined() && gi.numel() > 0) {
      RowNormPlan p = plan_row_norm(g.R, g.D);
      RowGradArgs<T> a{gp, xp, ptr_or_null<T>(w), mp, rp, mutable_or_null<T>(gi), g.R, g.D, g.G, g.S,
                       g.D <= int64_t{0xffffffff}};
      row_norm_input_grad<T><<<dim3(static_cast<unsigned>(p.grid)), dim3(p.block_x, p.block_y), 0,
                               current_raw_stream()>>>(p, a);
      EMBER_CUDA_CHECK_LAUNCH();
    }
    if (!gw.defined() && !gb.defined()) return;
    // Parameter k covers, in each of the R / G samples, S consecutive elements: the input seen
    // as [R / G, G * P, S]. With S == 0 (group norm over an empty spatial size) the geometry
    // cannot say how many parameters there are; the gradients' own size does.
    const int64_t K = g.S > 0 ? g.G * g.per_row() : (gw.defined() ? gw.numel() : gb.numel());
    if (K == 0) return;
    channel_sums(g.R / g.G, K, g.S, RowParamTerms<T>{gp, xp, mp, rp, g.G, K / g.G},
                 RowParamFinish<T>{mutable_or_null<T>(gw), mutable_or_null<T>(gb)}, x.device());
  });
}

}  // namespace ember::cuda
