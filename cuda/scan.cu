// CUDA scans (cumsum, cumprod) along one dim, deterministic: the tensor is seen dense as
// [outer, n, inner] and each line is cut into runs that one thread scans in order
// (ScanPlan, cuda/reduce_plan.h). With several runs per line, a first pass totals each run,
// a second turns each line's totals into exclusive prefixes in run order, and the last pass
// scans each run starting from its prefix. Neighbouring threads take neighbouring lines
// (inner) or runs, and everything accumulates in acc_t (double, int64) like the CPU.
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/reduce.cuh"
#include "ember/cuda/reduce.h"

namespace ember::cuda {
namespace {

/// One scan's element access and operator (a + b, or a * b for cumprod), in acc_t<T>.
template <class T>
struct ScanOp {
  using Acc = acc_t<T>;
  ScanPlan plan;
  bool is_prod, reverse;

  __device__ Acc identity() const { return Acc(is_prod ? 1 : 0); }
  __device__ Acc apply(Acc a, Acc b) const { return is_prod ? a * b : a + b; }
  __device__ Acc load(const device_t<T>* p) const { return static_cast<Acc>(load_opmath<T>(p)); }

  /// Unit u (a run) -> offset of its line's first element, and its [begin, end) along n.
  __device__ void unit(int64_t u, int64_t& base, int64_t& begin, int64_t& end) const {
    const int64_t i = u % plan.inner, c = (u / plan.inner) % plan.chunks,
                  line = u / (plan.inner * plan.chunks);
    base = line * plan.n * plan.inner + i;
    begin = c * plan.chunk;
    end = begin + plan.chunk < plan.n ? begin + plan.chunk : plan.n;
  }
  /// Offset of the k-th element of a line in scan order.
  __device__ int64_t at(int64_t base, int64_t k) const {
    return base + (reverse ? plan.n - 1 - k : k) * plan.inner;
  }
};

template <class T>
__global__ void scan_totals_kernel(ScanOp<T> op, const device_t<T>* x, acc_t<T>* totals) {
  const int64_t units = op.plan.units(), stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += stride) {
    int64_t base, begin, end;
    op.unit(u, base, begin, end);
    acc_t<T> acc = op.identity();
    for (int64_t k = begin; k < end; ++k) acc = op.apply(acc, op.load(x + op.at(base, k)));
    totals[u] = acc;
  }
}

/// Each line's run totals become the exclusive prefixes of its runs, in run order.
template <class T>
__global__ void scan_prefix_kernel(ScanOp<T> op, acc_t<T>* totals) {
  const ScanPlan& p = op.plan;
  const int64_t lines = p.lines(), stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += stride) {
    acc_t<T>* t = totals + (l / p.inner) * p.chunks * p.inner + l % p.inner;
    acc_t<T> run = op.identity();
    for (int64_t c = 0; c < p.chunks; ++c) {
      acc_t<T> next = op.apply(run, t[c * p.inner]);
      t[c * p.inner] = run;
      run = next;
    }
  }
}

/// Scans each run from its prefix (totals == nullptr: one run per line, from the identity).
template <class T>
__global__ void scan_runs_kernel(ScanOp<T> op, const device_t<T>* x, device_t<T>* out,
                                 const acc_t<T>* prefix) {
  const int64_t units = op.plan.units(), stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += stride) {
    int64_t base, begin, end;
    op.unit(u, base, begin, end);
    acc_t<T> acc = prefix != nullptr ? prefix[u] : op.identity();
    for (int64_t k = begin; k < end; ++k) {
      const int64_t off = op.at(base, k);
      acc = op.apply(acc, op.load(x + off));
      if constexpr (std::is_same_v<T, bool>)
        out[off] = acc != 0;
      else
        out[off] = to_stored<T>(static_cast<opmath_t<T>>(acc));
    }
  }
}

}  // namespace

void scan(ScanFn fn, const Tensor& x_in, const Tensor& out, int64_t dim, bool reverse) {
  EMBER_CHECK(x_in.is_cuda() && out.device() == x_in.device() && x_in.dtype() == out.dtype(),
              "internal error: cuda::scan was called with ", x_in.device(), " and ", out.device(),
              " tensors");
  EMBER_CHECK(out.is_contiguous(), "internal error: cuda::scan needs a dense output");
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  Tensor x = x_in.detach().contiguous();
  ScanPlan plan = plan_scan(x.sizes(), dim, sm_count());
  cudaStream_t stream = current_raw_stream();
  visit_dtype(x.dtype(), [&]<typename T>() {
    using Acc = acc_t<T>;
    ScanOp<T> op{plan, fn == ScanFn::kCumprod, reverse};
    const auto* xp = static_cast<const device_t<T>*>(x.data_ptr());
    auto* op_out = static_cast<device_t<T>*>(out.data_ptr());
    if (plan.chunks == 1) {
      scan_runs_kernel<T><<<blocks_for(plan.units()), kThreads, 0, stream>>>(op, xp, op_out, nullptr);
      EMBER_CUDA_CHECK_LAUNCH();
      return;
    }
    Tensor buf = device_scratch(plan.units() * static_cast<int64_t>(sizeof(Acc)), x.device());
    auto* totals = static_cast<Acc*>(buf.data_ptr());
    scan_totals_kernel<T><<<blocks_for(plan.units()), kThreads, 0, stream>>>(op, xp, totals);
    EMBER_CUDA_CHECK_LAUNCH();
    scan_prefix_kernel<T><<<blocks_for(plan.lines()), kThreads, 0, stream>>>(op, totals);
    EMBER_CUDA_CHECK_LAUNCH();
    scan_runs_kernel<T><<<blocks_for(plan.units()), kThreads, 0, stream>>>(op, xp, op_out, totals);
    EMBER_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ember::cuda
