// CUDA reductions, part 1: the dispatcher of cuda/reduce.h and the arithmetic and logical
// reductions (sum, prod, mean, all, any). The machinery is in cuda/reduce.cuh; var/std,
// logsumexp and norm are in reduce_stats.cu, max/min/arg* in minmax.cu.
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/reduce.cuh"
#include "ember/cuda/reduce.h"

namespace ember::cuda {
namespace {

/// Converts an accumulator to the stored type of T as the CPU does: through opmath_t, and
/// bool as "!= 0".
template <class T, class A>
__device__ __forceinline__ device_t<T> store_acc(A acc) {
  if constexpr (std::is_same_v<T, bool>)
    return acc != 0;
  else
    return to_stored<T>(static_cast<opmath_t<T>>(acc));
}

/// sum (IsProd = false) or prod, in acc_t<T>.
template <class T, bool IsProd>
struct SumProdOps {
  using Acc = acc_t<T>;
  device_t<T>* out;
  __device__ Acc init(int64_t) const { return Acc(IsProd ? 1 : 0); }
  __device__ Acc step(Acc a, opmath_t<T> v, int64_t) const { return combine(a, static_cast<Acc>(v)); }
  __device__ Acc combine(Acc a, Acc b) const {
    if constexpr (IsProd)
      return a * b;
    else
      return a + b;
  }
  __device__ void write(int64_t o, Acc a) const { out[o] = store_acc<T>(a); }
};

/// mean = sum / n in double (an empty reduction gives 0 / 0 = NaN, as the CPU).
template <class T>
struct MeanOps {
  using Acc = double;
  device_t<T>* out;
  double n;
  __device__ Acc init(int64_t) const { return 0; }
  __device__ Acc step(Acc a, opmath_t<T> v, int64_t) const { return a + static_cast<double>(v); }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void write(int64_t o, Acc a) const { out[o] = to_stored<T>(a / n); }
};

/// all (every element nonzero) or any; out is bool or uint8, one byte either way.
template <class T>
struct AllAnyOps {
  using Acc = bool;
  unsigned char* out;
  bool is_all;
  __device__ Acc init(int64_t) const { return is_all; }
  __device__ Acc step(Acc a, opmath_t<T> v, int64_t) const { return combine(a, v != opmath_t<T>(0)); }
  __device__ Acc combine(Acc a, Acc b) const { return is_all ? (a && b) : (a || b); }
  __device__ void write(int64_t o, Acc a) const { out[o] = a ? 1 : 0; }
};

int64_t reduced_count(const Tensor& x, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) n *= x.size(d);
  return n;
}

}  // namespace

namespace reduce_impl {

void sum_prod(const Tensor& x, const Tensor& out, uint64_t mask, bool is_prod) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    auto* o = static_cast<device_t<T>*>(out.data_ptr());
    if (is_prod)
      launch_reduce<T>(x, mask, SumProdOps<T, true>{o});
    else
      launch_reduce<T>(x, mask, SumProdOps<T, false>{o});
  });
}

void mean(const Tensor& x, const Tensor& out, uint64_t mask) {
  double n = static_cast<double>(reduced_count(x, mask));
  visit_float_dtype(x.dtype(), "mean", [&]<typename T>() {
    launch_reduce<T>(x, mask, MeanOps<T>{static_cast<device_t<T>*>(out.data_ptr()), n});
  });
}

void all_any(const Tensor& x, const Tensor& out, uint64_t mask, bool is_all) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    launch_reduce<T>(x, mask, AllAnyOps<T>{static_cast<unsigned char*>(out.data_ptr()), is_all});
  });
}

}  // namespace reduce_impl

void reduce(ReduceFn fn, const Tensor& x, const Tensor& out, uint64_t mask, double p) {
  EMBER_CHECK(x.is_cuda() && out.device() == x.device(), "internal error: cuda::reduce was called with ",
              x.device(), " and ", out.device(), " tensors");
  EMBER_CHECK(out.is_contiguous(), "internal error: cuda::reduce needs a dense output");
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  switch (fn) {
    case ReduceFn::kSum:
      return reduce_impl::sum_prod(x, out, mask, false);
    case ReduceFn::kProd:
      return reduce_impl::sum_prod(x, out, mask, true);
    case ReduceFn::kMean:
      return reduce_impl::mean(x, out, mask);
    case ReduceFn::kAll:
      return reduce_impl::all_any(x, out, mask, true);
    case ReduceFn::kAny:
      return reduce_impl::all_any(x, out, mask, false);
    case ReduceFn::kMax:
      return reduce_impl::extreme(x, out, mask, true);
    case ReduceFn::kMin:
      return reduce_impl::extreme(x, out, mask, false);
    case ReduceFn::kVar:
      return reduce_impl::var_std(x, out, mask, p, false);
    case ReduceFn::kStd:
      return reduce_impl::var_std(x, out, mask, p, true);
    case ReduceFn::kLogSumExp:
      return reduce_impl::logsumexp(x, out, mask);
    case ReduceFn::kNorm:
      return reduce_impl::norm(x, out, mask, p);
  }
}

void arg_reduce(bool is_max, const Tensor& x, const Tensor* values, const Tensor& indices, uint64_t mask) {
  EMBER_CHECK(x.is_cuda() && indices.device() == x.device(),
              "internal error: cuda::arg_reduce was called with ", x.device(), " and ", indices.device(),
              " tensors");
  EMBER_CHECK(indices.is_contiguous() && (values == nullptr || values->is_contiguous()),
              "internal error: cuda::arg_reduce needs dense outputs");
  if (indices.numel() == 0) return;
  DeviceGuard guard(indices.device());
  reduce_impl::arg_extreme(x, values, indices, mask, is_max);
}

}  // namespace ember::cuda
