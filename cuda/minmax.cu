// CUDA reductions, part 3: the value-selecting ones. max/min/amax/amin fold values with a
// NaN-propagating select; max/min over a dim and argmax/argmin fold (value, position) pairs.
// The rules are core/ops/minmax_math.h's, which the CPU runs too: the pairs' merge breaks ties
// by position, so the result is the first of equal extremes (the first NaN, if any) whatever
// order the partials meet in.
#include "ember/core/ops/minmax_math.h"
#include "ember/cuda/reduce.cuh"

namespace ember::cuda {
namespace {

template <class T, bool IsMax>
struct ExtremeOps {
  using M = opmath_t<T>;
  using Acc = M;
  device_t<T>* out;
  M start;
  __device__ Acc init(int64_t) const { return start; }
  __device__ Acc step(Acc a, M v, int64_t) const { return pick_extreme<IsMax>(a, v); }
  __device__ Acc combine(Acc a, Acc b) const { return pick_extreme<IsMax>(a, b); }
  __device__ void write(int64_t o, Acc a) const { out[o] = to_stored<T>(a); }
};

/// The fold of core/ops/minmax_math.h's ArgExtreme, as the CPU runs it.
template <class T, bool IsMax>
struct ArgOps {
  using M = opmath_t<T>;
  using F = ArgExtreme<IsMax, M>;
  using Acc = typename F::Acc;
  device_t<T>* values;  // may be null (argmax)
  int64_t* indices;
  __device__ Acc init(int64_t) const { return F::init(); }
  __device__ Acc step(Acc a, M v, int64_t r) const { return F::step(a, v, r); }
  __device__ Acc combine(Acc a, Acc b) const { return F::combine(a, b); }
  __device__ void write(int64_t o, const Acc& a) const {
    indices[o] = a.index;
    if (values != nullptr) values[o] = to_stored<T>(a.value);
  }
};

}  // namespace

namespace reduce_impl {

void extreme(const Tensor& x, const Tensor& out, uint64_t mask, bool is_max) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    auto* o = static_cast<device_t<T>*>(out.data_ptr());
    if (is_max)
      launch_reduce<T>(x, mask, ExtremeOps<T, true>{o, extreme_init<true, opmath_t<T>>()});
    else
      launch_reduce<T>(x, mask, ExtremeOps<T, false>{o, extreme_init<false, opmath_t<T>>()});
  });
}

void arg_extreme(const Tensor& x, const Tensor* values, const Tensor& indices, uint64_t mask, bool is_max) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    auto* v = values ? static_cast<device_t<T>*>(values->data_ptr()) : nullptr;
    auto* i = static_cast<int64_t*>(indices.data_ptr());
    if (is_max)
      launch_reduce<T>(x, mask, ArgOps<T, true>{v, i});
    else
      launch_reduce<T>(x, mask, ArgOps<T, false>{v, i});
  });
}

}  // namespace reduce_impl
}  // namespace ember::cuda
