// CUDA softmax / log_softmax and their input gradients (cuda/softmax.h), in the three launch
// shapes of cuda/softmax_plan.h. Values are computed in opmath_t (float for float16 and
// bfloat16) with the CPU's formulas (core/ops/softmax_math.h, called by both):
//   softmax      y = exp(x - max) * (1 / sum),  sum = sum(exp(x - max))
//   log_softmax  y = x - (max + log(sum))
//   backward     softmax: gx = y (g - sum(g y));  log_softmax: gx = g - exp(y) sum(g)
// The register kernel keeps a row (up to 8192 elements) in registers and takes max and sum
// exactly as the CPU does. The other two fold a running (max, sum) pair (cuda/softmax_math.h), rescaling the
// sum when the max grows, with rules that make every row the CPU makes NaN (a NaN, a +inf,
// or only -inf) come out NaN here too, and -inf elements of other rows exactly 0.
#include <cuda_runtime.h>

#include <utility>

#include "ember/core/math.h"
#include "ember/core/ops/softmax_math.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/row_reduce.cuh"
#include "ember/cuda/softmax.h"
#include "ember/cuda/softmax_math.h"
#include "ember/cuda/softmax_plan.h"

namespace ember::cuda {
namespace {

// ---- arithmetic (the running pair and the outputs: cuda/softmax_math.h) ----------------------

using namespace softmax_math;

struct MaxOp {
  template <class M>
  __device__ M operator()(M a, M b) const {
    return max_of(a, b);
  }
};

struct SumOp {
  template <class M>
  __device__ M operator()(M a, M b) const {
    return a + b;
  }
};

/// The backward's per-element term of the row sum and the input gradient: the CPU's
/// (core/ops/softmax_math.h).
template <bool Log, class M>
__device__ __forceinline__ M row_term(M g, M y) {
  return SoftmaxBackwardFn<Log>::row_term(g, y);
}
template <bool Log, class M>
__device__ __forceinline__ M grad_in(M g, M y, M s) {
  return SoftmaxBackwardFn<Log>::grad_in(g, y, s);
}

// ---- register rows (inner == 1, rows up to kSoftmaxRegisterMaxCols) -------------------------

// kMaxThreads: the block size the launch bounds promise (kSoftmaxRegisterThreads for rows of
// up to a warp, kSoftmaxBlockMaxThreads for block-wide rows), so that warp rows keep the
// registers their up to 32 elements a lane need.
template <class T, bool Log, int kPer, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads)
    softmax_register_rows(SoftmaxPlan plan, const device_t<T>* x, device_t<T>* y) {
  using M = opmath_t<T>;
  __shared__ M smem[kMaxThreads / 32];  // the fold across warps of a block-wide row
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t n = plan.n;
  for (int64_t u = blockIdx.x; u < plan.units; u += gridDim.x) {
    const int64_t row = plan.register_row(u, ty);
    const bool active = row < plan.outer;  // inactive lanes still join the shuffles
    const int64_t base = (active ? row : 0) * n;
    M v[kPer];
    M mx = neg_inf<M>();
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = plan.register_col(tx, i);
      v[i] = active && j < n ? load_opmath<T>(x + base + j) : neg_inf<M>();
      mx = max_of(mx, v[i]);
    }
    mx = row_allreduce(mx, MaxOp{}, smem);
    M s = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (plan.register_col(tx, i) >= n) continue;  // padding: no term (exp(-inf - max) may be NaN)
      M e = math::exp(v[i] - mx);
      if constexpr (!Log) v[i] = e;  // softmax keeps the exponentials and scales them
      s += e;
    }
    s = row_allreduce(s, SumOp{}, smem);
    if (!active) continue;
    // v holds x for log_softmax and exp(x - max) for softmax: out's two arguments.
    const M c = SoftmaxFn<Log>::row_constant(mx, s);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = plan.register_col(tx, i);
      if (j < n) y[base + j] = to_stored<T>(SoftmaxFn<Log>::out(v[i], v[i], c));
    }
  }
}

template <class T, bool Log, int kPer, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads)
    softmax_backward_register_rows(SoftmaxPlan plan, const device_t<T>* g, const device_t<T>* y, device_t<T>* gx) {
  using M = opmath_t<T>;
  __shared__ M smem[kMaxThreads / 32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t n = plan.n;
  for (int64_t u = blockIdx.x; u < plan.units; u += gridDim.x) {
    const int64_t row = plan.register_row(u, ty);
    const bool active = row < plan.outer;
    const int64_t base = (active ? row : 0) * n;
    M gv[kPer], yv[kPer];
    M s = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = plan.register_col(tx, i);
      const bool in = active && j < n;
      gv[i] = in ? load_opmath<T>(g + base + j) : M(0);
      yv[i] = in ? load_opmath<T>(y + base + j) : M(0);
      if (in) s += row_term<Log>(gv[i], yv[i]);
    }
    s = row_allreduce(s, SumOp{}, smem);
    if (!active) continue;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = plan.register_col(tx, i);
      if (j < n) gx[base + j] = to_stored<T>(grad_in<Log>(gv[i], yv[i], s));
    }
  }
}

// ---- block rows (inner == 1, long rows) -----------------------------------------------------

template <class T, bool Log>
__global__ void __launch_bounds__(kSoftmaxBlockMaxThreads)
    softmax_block_rows(SoftmaxPlan plan, const device_t<T>* x, device_t<T>* y) {
  using M = opmath_t<T>;
  __shared__ MaxSum<M> smem[kSoftmaxBlockMaxThreads / 32];
  const int64_t n = plan.n, step = blockDim.x;
  for (int64_t row = blockIdx.x; row < plan.outer; row += gridDim.x) {
    const device_t<T>* xr = x + row * n;
    MaxSum<M> st{neg_inf<M>(), M(0)};
    int64_t j = threadIdx.x;
    // Four loads in flight before the dependent folds.
    for (; j + 3 * step < n; j += 4 * step) {
      M a[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) a[k] = load_opmath<T>(xr + j + k * step);
#pragma unroll
      for (int k = 0; k < 4; ++k) st = fold(st, a[k]);
    }
    for (; j < n; j += step) st = fold(st, load_opmath<T>(xr + j));
    st = row_allreduce(st, MaxSumOp{}, smem);
    const M s = final_sum(st);
    device_t<T>* yr = y + row * n;
    for (j = threadIdx.x; j < n; j += step) yr[j] = to_stored<T>(softmax_out<Log>(load_opmath<T>(xr + j), st.m, s));
  }
}

template <class T, bool Log>
__global__ void __launch_bounds__(kSoftmaxBlockMaxThreads)
    softmax_backward_block_rows(SoftmaxPlan plan, const device_t<T>* g, const device_t<T>* y, device_t<T>* gx) {
  using M = opmath_t<T>;
  __shared__ M smem[kSoftmaxBlockMaxThreads / 32];
  const int64_t n = plan.n, step = blockDim.x;
  for (int64_t row = blockIdx.x; row < plan.outer; row += gridDim.x) {
    const device_t<T>*gr = g + row * n, *yr = y + row * n;
    M s = 0;
    for (int64_t j = threadIdx.x; j < n; j += step) s += row_term<Log>(load_opmath<T>(gr + j), load_opmath<T>(yr + j));
    s = row_allreduce(s, SumOp{}, smem);
    device_t<T>* out = gx + row * n;
    for (int64_t j = threadIdx.x; j < n; j += step)
      out[j] = to_stored<T>(grad_in<Log>(load_opmath<T>(gr + j), load_opmath<T>(yr + j), s));
  }
}

// ---- strided (inner > 1) ----------------------------------------------------------------------

template <class T, bool Log>
__global__ void __launch_bounds__(kSoftmaxStridedThreads)
    softmax_strided(SoftmaxPlan plan, const device_t<T>* x, device_t<T>* y) {
  using M = opmath_t<T>;
  __shared__ MaxSum<M> smem[kSoftmaxStridedThreads];
  const int64_t n = plan.n, inner = plan.inner;
  for (int64_t u = blockIdx.x; u < plan.units; u += gridDim.x) {
    const int64_t col = plan.strided_col(u, threadIdx.x);
    const bool active = col < inner;  // inactive lanes still join the fold's barriers
    const int64_t base = plan.strided_outer(u) * n * inner + col;
    MaxSum<M> st{neg_inf<M>(), M(0)};
    if (active)
      for (int64_t j = threadIdx.y; j < n; j += blockDim.y) st = fold(st, load_opmath<T>(x + base + j * inner));
    st = column_allreduce(st, MaxSumOp{}, smem);
    if (!active) continue;
    const M s = final_sum(st);
    for (int64_t j = threadIdx.y; j < n; j += blockDim.y) {
      const int64_t k = base + j * inner;
      y[k] = to_stored<T>(softmax_out<Log>(load_opmath<T>(x + k), st.m, s));
    }
  }
}

template <class T, bool Log>
__global__ void __launch_bounds__(kSoftmaxStridedThreads)
    softmax_backward_strided(SoftmaxPlan plan, const device_t<T>* g, const device_t<T>* y, device_t<T>* gx) {
  using M = opmath_t<T>;
  __shared__ M smem[kSoftmaxStridedThreads];
  const int64_t n = plan.n, inner = plan.inner;
  for (int64_t u = blockIdx.x; u < plan.units; u += gridDim.x) {
    const int64_t col = plan.strided_col(u, threadIdx.x);
    const bool active = col < inner;
    const int64_t base = plan.strided_outer(u) * n * inner + col;
    M s = 0;
    if (active)
      for (int64_t j = threadIdx.y; j < n; j += blockDim.y) {
        const int64_t k = base + j * inner;
        s += row_term<Log>(load_opmath<T>(g + k), load_opmath<T>(y + k));
      }
    s = column_allreduce(s, SumOp{}, smem);
    if (!active) continue;
    for (int64_t j = threadIdx.y; j < n; j += blockDim.y) {
      const int64_t k = base + j * inner;
      gx[k] = to_stored<T>(grad_in<Log>(load_opmath<T>(g + k), load_opmath<T>(y + k), s));
    }
  }
}

// ---- host side ---------------------------------------------------------------------------------

/// The plan for a dense tensor of `sizes` with the softmax over `dim` (0 for a 0-dim one).
SoftmaxPlan plan_for(const Tensor& t, int64_t dim) {
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < dim) outer *= t.size(d);
    else if (d == dim) n = t.size(d);
    else inner *= t.size(d);
  }
  return plan_softmax(outer, n, inner);
}

/// Calls f(std::integral_constant<int, P>, std::integral_constant<int, B>) for the register
/// kernel's elements per lane P and launch bound B.
template <class F>
void with_register_shape(const SoftmaxPlan& p, F&& f) {
  using std::integral_constant;
  constexpr int kWarpRows = kSoftmaxRegisterThreads, kBlockRow = kSoftmaxBlockMaxThreads;
  if (p.block_x > 32) {
    if (p.per_lane == kSoftmaxBlockPerLane)
      return f(integral_constant<int, kSoftmaxBlockPerLane>{}, integral_constant<int, kBlockRow>{});
  } else {
    switch (p.per_lane) {
      case 1: return f(integral_constant<int, 1>{}, integral_constant<int, kWarpRows>{});
      case 2: return f(integral_constant<int, 2>{}, integral_constant<int, kWarpRows>{});
      case 4: return f(integral_constant<int, 4>{}, integral_constant<int, kWarpRows>{});
      case 8: return f(integral_constant<int, 8>{}, integral_constant<int, kWarpRows>{});
      case 16: return f(integral_constant<int, 16>{}, integral_constant<int, kWarpRows>{});
      case 32: return f(integral_constant<int, 32>{}, integral_constant<int, kWarpRows>{});
      default: break;
    }
  }
  ::ember::detail::throw_error(::ember::detail::str_cat("internal error: no softmax register kernel for ", p.block_x,
                                                        " lanes of ", p.per_lane, " elements"));
}

template <class T, bool Log>
void launch_forward(const SoftmaxPlan& p, const Tensor& x, const Tensor& out) {
  const auto* xp = static_cast<const device_t<T>*>(x.data_ptr());
  auto* yp = static_cast<device_t<T>*>(out.data_ptr());
  const dim3 grid(static_cast<unsigned>(p.grid)), block(p.block_x, p.block_y);
  cudaStream_t stream = current_raw_stream();
  switch (p.kernel) {
    case SoftmaxKernel::kRegisterRows:
      with_register_shape(p, [&](auto per, auto bound) {
        softmax_register_rows<T, Log, decltype(per)::value, decltype(bound)::value><<<grid, block, 0, stream>>>(p, xp,
                                                                                                            yp);
      });
      break;
    case SoftmaxKernel::kBlockRows:
      softmax_block_rows<T, Log><<<grid, block, 0, stream>>>(p, xp, yp);
      break;
    case SoftmaxKernel::kStrided:
      softmax_strided<T, Log><<<grid, block, 0, stream>>>(p, xp, yp);
      break;
  }
  EMBER_CUDA_CHECK_LAUNCH();
}

template <class T, bool Log>
void launch_backward(const SoftmaxPlan& p, const Tensor& grad, const Tensor& output, const Tensor& grad_input) {
  const auto* gp = static_cast<const device_t<T>*>(grad.data_ptr());
  const auto* yp = static_cast<const device_t<T>*>(output.data_ptr());
  auto* gxp = static_cast<device_t<T>*>(grad_input.data_ptr());
  const dim3 grid(static_cast<unsigned>(p.grid)), block(p.block_x, p.block_y);
  cudaStream_t stream = current_raw_stream();
  switch (p.kernel) {
    case SoftmaxKernel::kRegisterRows:
      with_register_shape(p, [&](auto per, auto bound) {
        softmax_backward_register_rows<T, Log, decltype(per)::value, decltype(bound)::value>
            <<<grid, block, 0, stream>>>(p, gp, yp, gxp);
      });
      break;
    case SoftmaxKernel::kBlockRows:
      softmax_backward_block_rows<T, Log><<<grid, block, 0, stream>>>(p, gp, yp, gxp);
      break;
    case SoftmaxKernel::kStrided:
      softmax_backward_strided<T, Log><<<grid, block, 0, stream>>>(p, gp, yp, gxp);
      break;
  }
  EMBER_CUDA_CHECK_LAUNCH();
}

void check_dense(std::initializer_list<const Tensor*> ts, const char* what) {
  const Tensor& first = **ts.begin();
  for (const Tensor* t : ts)
    EMBER_CHECK(t->is_cuda() && t->device() == first.device() && t->is_contiguous() && t->dtype() == first.dtype() &&
                    t->sizes().equals(first.sizes()),
                "internal error: cuda::", what, " needs dense CUDA tensors of one device, dtype and shape");
}

}  // namespace

void softmax(const Tensor& x, const Tensor& out, int64_t dim, bool log) {
  check_dense({&x, &out}, "softmax");
  if (x.numel() == 0) return;
  DeviceGuard guard(x.device());
  SoftmaxPlan p = plan_for(x, dim);
  visit_float_dtype(x.dtype(), log ? "log_softmax_cuda" : "softmax_cuda", [&]<typename T>() {
    if (log) launch_forward<T, true>(p, x, out);
    else launch_forward<T, false>(p, x, out);
  });
}

void softmax_backward(const Tensor& grad, const Tensor& output, const Tensor& grad_input, int64_t dim, bool log) {
  check_dense({&grad, &output, &grad_input}, "softmax_backward");
  if (output.numel() == 0) return;
  DeviceGuard guard(output.device());
  SoftmaxPlan p = plan_for(output, dim);
  visit_float_dtype(output.dtype(), log ? "log_softmax_backward_cuda" : "softmax_backward_cuda", [&]<typename T>() {
    if (log) launch_backward<T, true>(p, grad, output, grad_input);
    else launch_backward<T, false>(p, grad, output, grad_input);
  });
}

}  // namespace ember::cuda
