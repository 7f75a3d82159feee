// CUDA reductions, part 2: var/std, logsumexp and norm, with the CPU path's formulas
// (core/ops/reduce_math.h, core/ops/minmax_math.h) in double. var/std and logsumexp take two
// reductions: per-output means (maxima) into a scratch buffer, then the deviations from them
// (the sum of exp(x - max)).
#include "ember/core/ops/minmax_math.h"
#include "ember/core/ops/reduce_math.h"
#include "ember/cuda/reduce.cuh"

namespace ember::cuda {
namespace {

int64_t reduced_count(const Tensor& x, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) n *= x.size(d);
  return n;
}

/// buf[o] = sum / n in double: the means var/std start from.
template <class T>
struct MeanToBufferOps {
  using Acc = double;
  double* buf;
  double n;
  __device__ Acc init(int64_t) const { return 0; }
  __device__ Acc step(Acc a, opmath_t<T> v, int64_t) const { return a + static_cast<double>(v); }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void write(int64_t o, Acc a) const { buf[o] = a / n; }
};

// The folds below run core/ops/reduce_math.h's terms, as the CPU does.

template <class T>
struct VarStdOps {
  using Acc = Deviations;
  device_t<T>* out;
  const double* mean;
  double n, correction;
  bool take_sqrt;
  __device__ Acc init(int64_t o) const { return {mean[o], 0, 0}; }
  __device__ Acc step(Acc a, opmath_t<T> v, int64_t) const { return var_step(a, static_cast<double>(v)); }
  __device__ Acc combine(Acc a, const Acc& b) const { return var_combine(a, b); }
  __device__ void write(int64_t o, const Acc& a) const {
    out[o] = to_stored<T>(var_finish(a, n, correction, take_sqrt));
  }
};

/// buf[o] = the shift of logsumexp, from the NaN-propagating max.
template <class T>
struct ShiftOps {
  using M = opmath_t<T>;
  using Acc = M;
  M* buf;
  __device__ Acc init(int64_t) const { return extreme_init<true, M>(); }
  __device__ Acc step(Acc a, M v, int64_t) const { return pick_extreme<true>(a, v); }
  __device__ Acc combine(Acc a, Acc b) const { return pick_extreme<true>(a, b); }
  __device__ void write(int64_t o, Acc a) const { buf[o] = lse_shift(a); }
};

template <class T>
struct LseOps {
  using M = opmath_t<T>;
  using Acc = LseAcc<M>;
  device_t<T>* out;
  const M* shift;
  __device__ Acc init(int64_t o) const { return {shift[o], 0}; }
  __device__ Acc step(Acc a, M v, int64_t) const { return lse_step(a, v); }
  __device__ Acc combine(Acc a, const Acc& b) const { return lse_combine(a, b); }
  __device__ void write(int64_t o, const Acc& a) const { out[o] = to_stored<T>(lse_finish(a)); }
};

/// The p-norm kind is chosen at run time: the loop is memory-bound, so one kernel per dtype.
template <class T>
struct NormOps {
  using Acc = double;
  device_t<T>* out;
  NormKind kind;
  double p;
  bool empty;  // no elements: 0 for every p, as PyTorch
  __device__ Acc init(int64_t) const { return norm_init(kind); }
  __device__ Acc step(Acc a, opmath_t<T> x, int64_t) const {
    return norm_step(kind, a, static_cast<double>(x), p);
  }
  __device__ Acc combine(Acc a, Acc b) const { return norm_combine(kind, a, b); }
  __device__ void write(int64_t o, Acc a) const { out[o] = to_stored<T>(norm_finish(kind, a, p, empty)); }
};

}  // namespace

namespace reduce_impl {

void var_std(const Tensor& x, const Tensor& out, uint64_t mask, double correction, bool take_sqrt) {
  double n = static_cast<double>(reduced_count(x, mask));
  visit_float_dtype(x.dtype(), take_sqrt ? "std" : "var", [&]<typename T>() {
    Tensor mean = device_scratch(out.numel() * static_cast<int64_t>(sizeof(double)), x.device());
    auto* m = static_cast<double*>(mean.data_ptr());
    launch_reduce<T>(x, mask, MeanToBufferOps<T>{m, n});
    launch_reduce<T>(x, mask,
                     VarStdOps<T>{static_cast<device_t<T>*>(out.data_ptr()), m, n, correction, take_sqrt});
  });
}

void logsumexp(const Tensor& x, const Tensor& out, uint64_t mask) {
  visit_float_dtype(x.dtype(), "logsumexp", [&]<typename T>() {
    using M = opmath_t<T>;
    Tensor shift = device_scratch(out.numel() * static_cast<int64_t>(sizeof(M)), x.device());
    auto* s = static_cast<M*>(shift.data_ptr());
    launch_reduce<T>(x, mask, ShiftOps<T>{s});
    launch_reduce<T>(x, mask, LseOps<T>{static_cast<device_t<T>*>(out.data_ptr()), s});
  });
}

void norm(const Tensor& x, const Tensor& out, uint64_t mask, double p) {
  bool empty = reduced_count(x, mask) == 0;
  visit_float_dtype(x.dtype(), "norm", [&]<typename T>() {
    launch_reduce<T>(x, mask, NormOps<T>{static_cast<device_t<T>*>(out.data_ptr()), norm_kind(p), p, empty});
  });
}

}  // namespace reduce_impl
}  // namespace ember::cuda
