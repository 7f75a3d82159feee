// CUDA reductions, part 3: the value-selecting ones. max/min/amax/amin fold values with a
// NaN-propagating select; max/min over a dim and argmax/argmin fold (value, position) pairs.
// The pairs' merge breaks ties by position and lets NaN beat every number, so the result is
// the first of equal extremes (the first NaN, if any) whatever order the partials meet in.
#include "ember/cuda/reduce.cuh"

namespace ember::cuda {
namespace {

/// The starting value of a max (min): nothing compares below (above) it.
template <bool IsMax, class M>
M extreme_init() {
  if constexpr (std::is_floating_point_v<M>)
    return IsMax ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::infinity();
  else
    return IsMax ? std::numeric_limits<M>::lowest() : std::numeric_limits<M>::max();
}

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

/// The best value so far and its position (-1 before the first element).
template <class M>
struct ArgAcc {
  M value;
  int64_t index;
};

template <class T, bool IsMax>
struct ArgOps {
  using M = opmath_t<T>;
  using Acc = ArgAcc<M>;
  device_t<T>* values;  // may be null (argmax)
  int64_t* indices;
  __device__ Acc init(int64_t) const { return {M(0), -1}; }
  // Positions arrive in increasing order within one accumulator: strict `beats` keeps the first.
  __device__ Acc step(Acc a, M v, int64_t r) const {
    return (a.index < 0 || beats<IsMax>(v, a.value)) ? Acc{v, r} : a;
  }
  __device__ Acc combine(Acc a, Acc b) const {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    if (beats<IsMax>(b.value, a.value)) return b;
    if (beats<IsMax>(a.value, b.value)) return a;
    return b.index < a.index ? b : a;  // equal (or both NaN): the first position wins
  }
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
