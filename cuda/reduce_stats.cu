// CUDA reductions, part 2: var/std, logsumexp and norm, with the CPU path's formulas
// (core/ops/reduce.cpp, core/ops/norm.cpp) in double. var/std and logsumexp take two
// reductions: per-output means (maxima) into a scratch buffer, then the deviations from them
// (the sum of exp(x - max)).
#include <cuda/std/limits>

#include <cmath>

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

/// Deviations from an output's mean: their sum and sum of squares. The sum corrects for the
/// rounding of the mean ("corrected two-pass"), as on the CPU.
struct Deviations {
  double mean, sum, sum_sq;
};

template <class T>
struct VarStdOps {
  using Acc = Deviations;
  device_t<T>* out;
  const double* mean;
  double n, correction;
  bool take_sqrt;
  __device__ Acc init(int64_t o) const { return {mean[o], 0, 0}; }
  __device__ Acc step(Acc a, opmath_t<T> v, int64_t) const {
    double d = static_cast<double>(v) - a.mean;
    a.sum += d;
    a.sum_sq += d * d;
    return a;
  }
  __device__ Acc combine(Acc a, const Acc& b) const {
    a.sum += b.sum;
    a.sum_sq += b.sum_sq;
    return a;
  }
  __device__ void write(int64_t o, const Acc& a) const {
    double m2 = a.sum_sq - a.sum * a.sum / n;  // n = 0: NaN, as PyTorch
    if (m2 < 0) m2 = 0;                        // rounding; NaN stays NaN
    double dof = n - correction > 0 ? n - correction : 0.0;
    double var = m2 / dof;
    out[o] = to_stored<T>(take_sqrt ? sqrt(var) : var);
  }
};

/// buf[o] = the NaN-propagating max, or 0 when it is infinite (inf - inf would be NaN): the
/// shift of logsumexp.
template <class T>
struct ShiftOps {
  using M = opmath_t<T>;
  using Acc = M;
  M* buf;
  __device__ Acc init(int64_t) const { return -::cuda::std::numeric_limits<M>::infinity(); }
  __device__ Acc step(Acc a, M v, int64_t) const { return pick_extreme<true>(a, v); }
  __device__ Acc combine(Acc a, Acc b) const { return pick_extreme<true>(a, b); }
  __device__ void write(int64_t o, Acc a) const { buf[o] = isinf(a) ? M(0) : a; }
};

template <class M>
struct LseAcc {
  M shift;
  double sum;
};

template <class M>
__device__ __forceinline__ M exp_of(M v) {
  if constexpr (std::is_same_v<M, float>)
    return expf(v);
  else
    return exp(v);
}

/// log(sum(exp(x - shift))) + shift, the exponentials in opmath_t as on the CPU.
template <class T>
struct LseOps {
  using M = opmath_t<T>;
  using Acc = LseAcc<M>;
  device_t<T>* out;
  const M* shift;
  __device__ Acc init(int64_t o) const { return {shift[o], 0}; }
  __device__ Acc step(Acc a, M v, int64_t) const {
    a.sum += static_cast<double>(exp_of<M>(v - a.shift));
    return a;
  }
  __device__ Acc combine(Acc a, const Acc& b) const {
    a.sum += b.sum;
    return a;
  }
  __device__ void write(int64_t o, const Acc& a) const { out[o] = to_stored<T>(log(a.sum) + a.shift); }
};

/// The p-norms, chosen at run time (the loop is memory-bound; one kernel per dtype).
enum class NormKind { kTwo, kOne, kZero, kInf, kNegInf, kGeneral };

template <class T>
struct NormOps {
  using Acc = double;
  device_t<T>* out;
  NormKind kind;
  double p;
  bool empty;  // no elements: 0 for every p, as PyTorch
  __device__ Acc init(int64_t) const { return kind == NormKind::kNegInf ? HUGE_VAL : 0.0; }
  __device__ Acc step(Acc a, opmath_t<T> x, int64_t) const {
    double v = fabs(static_cast<double>(x));
    switch (kind) {
      case NormKind::kTwo:
        return a + v * v;
      case NormKind::kOne:
        return a + v;
      case NormKind::kZero:
        return a + (v != 0 ? 1.0 : 0.0);
      case NormKind::kInf:
        return combine(a, v);
      case NormKind::kNegInf:
        return combine(a, v);
      default:
        return a + pow(v, p);
    }
  }
  // The CPU's nan_max / nan_min: a NaN on either side wins.
  __device__ Acc combine(Acc a, Acc b) const {
    switch (kind) {
      case NormKind::kInf:
        return isnan(a) || b <= a ? a : b;
      case NormKind::kNegInf:
        return isnan(a) || b >= a ? a : b;
      default:
        return a + b;
    }
  }
  __device__ void write(int64_t o, Acc a) const {
    double r = a;
    if (kind == NormKind::kTwo)
      r = sqrt(a);
    else if (kind == NormKind::kNegInf)
      r = empty ? 0.0 : a;
    else if (kind == NormKind::kGeneral)
      r = empty ? 0.0 : pow(a, 1.0 / p);
    out[o] = to_stored<T>(r);
  }
};

NormKind norm_kind(double p) {
  if (p == 2) return NormKind::kTwo;
  if (p == 1) return NormKind::kOne;
  if (p == 0) return NormKind::kZero;
  if (std::isinf(p)) return p > 0 ? NormKind::kInf : NormKind::kNegInf;
  return NormKind::kGeneral;
}

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
