// Value-selecting reductions: max/min (over everything, or over one dim with the indices),
// amax/amin (several dims) and argmax/argmin. NaN propagates as in PyTorch: a NaN beats
// every number, and the first NaN (or the first of equal extremes) is the one picked.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "ember/core/cpu/reduce.h"
#include "ember/core/cpu/vec_math.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/minmax.h"
#include "ember/core/ops/minmax_math.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/reduce_common.h"
#include "ember/core/ops/unary.h"
#include "ember/cuda/reduce.h"

namespace ember {
namespace {

using detail::reduced_shape;
using detail::unsqueeze_reduced;

/// values[o] = max (min) of x over `mask`, NaN-propagating; a simple select per element, so
/// the interleaved lanes of cpu_reduce vectorize.
template <class T, bool IsMax>
void extreme_typed(const Tensor& x, Tensor& values, uint64_t mask) {
  using M = opmath_t<T>;
  T* o = static_cast<T*>(values.data_ptr());
  auto pick = [](M a, M v) { return pick_extreme<IsMax>(a, v); };
  cpu::cpu_reduce<T, M>(
      x, mask, extreme_init<IsMax, M>(),
      [&pick](M acc, T v, int64_t) { return pick(acc, static_cast<M>(v)); }, pick,
      [o](int64_t i, M acc) { o[i] = static_cast<T>(acc); }, /*reorder=*/true);
}

void extreme_kernel(const Tensor& x, Tensor& values, uint64_t mask, bool is_max) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    is_max ? extreme_typed<T, true>(x, values, mask) : extreme_typed<T, false>(x, values, mask);
  });
}

/// Position of the max (min) of the dense float32 run p[0, n), with beats' rules: the first
/// NaN if there is one, else the first element equal to the extreme. Two passes, both SIMD:
/// the NaN-propagating extreme over 32 lanes, then a search for its first occurrence (the
/// run is still in L1/L2 when it is a row).
template <bool IsMax>
int64_t arg_dense_f32(const float* p, int64_t n) {
  namespace vec = cpu::vec;
  constexpr int64_t W = vec::kWidth;
  auto pick = [](vec::f8 a, vec::f8 v) {
    if constexpr (IsMax)
      return vec::select((v != v) | (v > a), v, a);
    else
      return vec::select((v != v) | (v < a), v, a);
  };
  vec::f8 acc[4];
  for (auto& a : acc) a = vec::load(p);
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W)
    for (int k = 0; k < 4; ++k) acc[k] = pick(acc[k], vec::load(p + i + k * W));
  for (; i + W <= n; i += W) acc[0] = pick(acc[0], vec::load(p + i));
  float m = p[0];
  for (int k = 0; k < 4; ++k)
    for (int64_t l = 0; l < W; ++l) m = (beats<IsMax>(acc[k][l], m)) ? acc[k][l] : m;
  for (; i < n; ++i) m = beats<IsMax>(p[i], m) ? p[i] : m;
  bool nan = m != m;
  vec::f8 mv = vec::splat(m);
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    vec::f8 v = vec::load(p + j);
    vec::i8 hit = nan ? (v != v) : (v == mv);
    int bits = __builtin_ia32_movmskps256(vec::as_float(hit));
    if (bits) return j + __builtin_ctz(static_cast<unsigned>(bits));
  }
  for (; j < n; ++j)
    if (nan ? p[j] != p[j] : p[j] == m) return j;
  return n - 1;  // not reached: m is one of the elements
}

/// indices[o] = position of the max (min) of x over `mask`; values[o] = that value if given.
template <class T, bool IsMax>
void arg_typed(const Tensor& x, Tensor* values, Tensor& indices, uint64_t mask) {
  if constexpr (std::is_same_v<T, float>) {
    // Each output reduces one dense run (rows of a contiguous matrix): the SIMD two-pass search.
    cpu::ReduceGeometry g = cpu::reduce_geometry(x, mask);
    if (g.red_sizes.size() == 1 && g.red_strides[0] == 1 && g.n_red >= 4 * cpu::vec::kWidth) {
      const float* data = static_cast<const float*>(x.data_ptr());
      float* vo = values ? static_cast<float*>(values->data_ptr()) : nullptr;
      int64_t* io = indices.data_ptr<int64_t>();
      int64_t grain = std::max<int64_t>(1, kGrainSize / g.n_red);
      parallel_for(g.n_out, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const float* p = data + cpu::kept_offset(g, o);
          int64_t idx = arg_dense_f32<IsMax>(p, g.n_red);
          io[o] = idx;
          if (vo) vo[o] = p[idx];
        }
      });
      return;
    }
  }
  using M = opmath_t<T>;
  using F = ArgExtreme<IsMax, M>;
  using A = typename F::Acc;
  T* vo = values ? static_cast<T*>(values->data_ptr()) : nullptr;
  int64_t* io = indices.data_ptr<int64_t>();
  cpu::cpu_reduce<T, A>(
      x, mask, F::init(), [](A acc, T v, int64_t i) { return F::step(acc, static_cast<M>(v), i); },
      [](const A& a, const A& b) { return F::combine(a, b); },
      [vo, io](int64_t i, const A& acc) {
        io[i] = acc.index;
        if (vo) vo[i] = static_cast<T>(acc.value);
      });
}

void arg_kernel(const Tensor& x, Tensor* values, Tensor& indices, uint64_t mask, bool is_max) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    is_max ? arg_typed<T, true>(x, values, indices, mask) : arg_typed<T, false>(x, values, indices, mask);
  });
}

/// Elements tied with the selected extreme r (NaN ties with NaN), as a bool mask.
Tensor ties_with(const Tensor& x, const Tensor& r) {
  Tensor ties = eq(x, r);
  if (x.is_floating_point()) ties = logical_or(ties, logical_and(isnan(x), isnan(r)));
  return ties;
}

// amax/amin, and max()/min() over everything: the gradient is shared evenly by the elements
// equal to the result (d/dx_i = [x_i == r] / #ties), as PyTorch's amax and max() do.
struct Extreme final : UnaryOp {
  uint64_t mask;
  bool keepdim, is_max;
  const char* op_name;
  Extreme(uint64_t m, bool k, bool mx, const char* n) : mask(m), keepdim(k), is_max(mx), op_name(n) {}
  const char* name() const override { return op_name; }
  std::string node_name() const override {
    // PyTorch numbers max()/min() over everything 1 ("MaxBackward1"); amax/amin have only 0.
    std::string_view n(op_name);
    return n == "max" ? "MaxBackward1" : n == "min" ? "MinBackward1" : Op::node_name();
  }
  Save saves() const override { return Save::kBoth; }
  void cpu(const Tensor& x, Tensor& out) const override { extreme_kernel(x, out, mask, is_max); }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::reduce(is_max ? cuda::ReduceFn::kMax : cuda::ReduceFn::kMin, x, out, mask);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    Tensor x = s.input(0);
    Tensor ties = ties_with(x, unsqueeze_reduced(s.output(), x.dim(), mask, keepdim));
    Tensor count = ties.sum(detail::mask_dims(mask, x.dim()), true);
    return unsqueeze_reduced(grad, x.dim(), mask, keepdim) / count * ties;
  }
};

// max/min over one dim, returning (values, indices): the gradient goes to the index picked.
struct ExtremeDim final : Op {
  int64_t dim;
  bool keepdim, is_max;
  ExtremeDim(int64_t d, bool k, bool mx) : dim(d), keepdim(k), is_max(mx) {}
  const char* name() const override { return is_max ? "max" : "min"; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const TensorList& in, TensorList& out) const override {
    arg_kernel(in[0], &out[0], out[1], dim_mask(IntArrayRef(dim), in[0].dim()), is_max);
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::arg_reduce(is_max, in[0], &out[0], out[1], dim_mask(IntArrayRef(dim), in[0].dim()));
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    return {detail::value_selecting_backward(grads[0], dim, s.output(1), s.input_sizes(0), keepdim)};
  }
};

/// PyTorch's check that a max-like reduction has something to reduce.
void check_nonempty(const Tensor& x, uint64_t mask, bool all_dims, const char* op, bool hint = true) {
  if (x.numel() != 0) return;
  EMBER_CHECK(!all_dims, op, "(): Expected reduction dim to be specified for input.numel() == 0.",
              hint ? " Specify the reduction dim with the 'dim' argument." : "");
  for (int64_t d = 0; d < x.dim(); ++d)
    EMBER_CHECK(!(detail::in_mask(mask, d) && x.size(d) == 0), op, "(): Expected reduction dim ", d,
                " to have non-zero size.");
}

Tensor extreme(const Tensor& x, IntArrayRef dims, bool keepdim, bool is_max, const char* op) {
  uint64_t mask = dim_mask(dims, x.dim());
  check_nonempty(x, mask, dims.empty(), op);
  return run_op(Extreme{mask, keepdim, is_max, op}, {x},
                OutSpec{reduced_shape(x.sizes(), mask, keepdim), x.dtype()});
}

std::tuple<Tensor, Tensor> extreme_dim(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  int64_t d = maybe_wrap_dim(dim, x.dim());
  uint64_t mask = dim_mask(IntArrayRef(d), x.dim());
  check_nonempty(x, mask, false, is_max ? "max" : "min");
  DimVector shape = reduced_shape(x.sizes(), mask, keepdim);
  TensorList out =
      run_op(ExtremeDim{d, keepdim, is_max}, {x}, {OutSpec{shape, x.dtype()}, OutSpec{shape, kLong}});
  return {out[0], out[1]};
}

Tensor arg_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  EMBER_CHECK(x.dtype() != kBool, "\"", op, "\" not implemented for 'Bool'");
  uint64_t mask = dim ? dim_mask(IntArrayRef(*dim), x.dim()) : dim_mask({}, x.dim());
  check_nonempty(x, mask, !dim, op, false);
  Tensor indices =
      empty(reduced_shape(x.sizes(), mask, keepdim), TensorOptions().dtype(kLong).device(x.device()));
  if (x.is_cuda())
    cuda::arg_reduce(is_max, x, nullptr, indices, mask);
  else
    arg_kernel(x, nullptr, indices, mask, is_max);
  return indices;
}

}  // namespace

Tensor max(const Tensor& x) { return extreme(x, {}, false, true, "max"); }
Tensor min(const Tensor& x) { return extreme(x, {}, false, false, "min"); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim(x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim(x, dim, keepdim, false);
}
Tensor amax(const Tensor& x, IntArrayRef dim, bool keepdim) { return extreme(x, dim, keepdim, true, "amax"); }
Tensor amin(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return extreme(x, dim, keepdim, false, "amin");
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(x, dim, keepdim, true);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(x, dim, keepdim, false);
}

Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ember::max(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ember::min(*this, dim, keepdim);
}
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return ember::amax(*this, dim, keepdim); }
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const { return ember::amin(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmin(*this, dim, keepdim);
}

}  // namespace ember
