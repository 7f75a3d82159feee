// Reductions: sum, mean, prod, var/std, logsumexp, all/any, sum_to_size. Each op: shape
// rules (dims, keepdim, dtype), CPU kernel via cpu_reduce (core/cpu/reduce.h), CUDA kernel
// (cuda/reduce.h) and backward, in one struct. max/min live in minmax.cpp, norm in norm.cpp,
// scans in scan.cpp, sorting in sort.cpp.
#include "ember/core/ops/reduce.h"

#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/autocast.h"
#include "ember/core/cpu/reduce.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/minmax_math.h"
#include "ember/core/ops/reduce_common.h"
#include "ember/core/ops/reduce_math.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/ops/unary.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/reduce.h"

namespace ember {
namespace {

using detail::expand_reduced;
using detail::reduced_shape;
using detail::unsqueeze_reduced;

/// The dtype sum/prod produce: integers (and bool) accumulate to int64, as PyTorch does.
ScalarType sum_dtype(ScalarType in, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(in, true) ? kLong : in;
}

/// The tensor sum/prod hand to their kernel. An integer or bool tensor summed into int64 on
/// the CPU goes as it is: the kernel widens each element as it reads it (arith_reduce), where
/// converting first would make an int64 copy eight times the input's size (17 GiB for 2^31
/// uint8 elements). Every other case is converted first, as PyTorch's `dtype=` does.
Tensor arith_reduce_input(const Tensor& x, ScalarType out_t) {
  if (out_t == kLong && x.is_cpu() && is_integral(x.dtype(), true)) return x;
  return x.to(out_t);
}

/// out = fold of the integer or bool tensor x over `mask`, out being int64 (each element
/// widened as it is read: arith_reduce_input) or x's own dtype. The fold runs in uint64_t:
/// unsigned arithmetic wraps modulo 2^64, and converting to a narrower or signed type keeps the
/// low bits, which gives PyTorch's wrapping integer sums and products without signed overflow
/// (undefined behaviour: INT64_MAX + 1 tripped UBSan).
template <class F>
void integer_reduce(const Tensor& x, Tensor& out, uint64_t mask, int init, const F& op) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {  // bool too
      auto fold = [&]<typename O>(O* o) {
        cpu::cpu_reduce<T, uint64_t>(
            x, mask, static_cast<uint64_t>(init),
            [&op](uint64_t acc, T v, int64_t) { return op(acc, static_cast<uint64_t>(static_cast<int64_t>(v))); },
            op,
            [o](int64_t i, uint64_t acc) {
              if constexpr (std::is_same_v<O, bool>)
                o[i] = acc != 0;
              else
                o[i] = static_cast<O>(acc);
            },
            /*reorder=*/true);
      };
      if (out.dtype() == x.dtype())
        fold(static_cast<T*>(out.data_ptr()));
      else
        fold(static_cast<int64_t*>(out.data_ptr()));
    } else {
      detail::throw_error(detail::str_cat("internal: integer reduction of ", x.dtype()));
    }
  });
}

/// out = fold of x over `mask` with `op` (a + b or a * b) in acc_t, starting from `init`.
template <class F>
void arith_reduce(const Tensor& x, Tensor& out, uint64_t mask, int init, const F& op) {
  if (is_integral(x.dtype(), true)) return integer_reduce(x, out, mask, init, op);
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_integral_v<T>) {  // integers took integer_reduce
      using A = acc_t<T>;
      T* o = static_cast<T*>(out.data_ptr());
      cpu::cpu_reduce<T, A>(
          x, mask, A(init),
          [&op](A acc, T v, int64_t) { return op(acc, static_cast<A>(static_cast<opmath_t<T>>(v))); }, op,
          [o](int64_t i, A acc) { o[i] = static_cast<T>(static_cast<opmath_t<T>>(acc)); },
          /*reorder=*/true);
    }
  });
}

// sum: d/dx_i sum(x) = 1: the gradient is broadcast back over the reduced dims.
struct Sum final : UnaryOp {
  // CUDA autocast sums in float32 unless a dtype is asked for (fp32_set_opt_dtype).
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  uint64_t mask;
  bool keepdim, with_dims;  // with_dims: sum(dim) (PyTorch's node SumBackward1) vs sum()
  Sum(uint64_t m, bool k, bool d) : mask(m), keepdim(k), with_dims(d) {}
  const char* name() const override { return "sum"; }
  std::string node_name() const override { return with_dims ? "SumBackward1" : "SumBackward0"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    arith_reduce(x, out, mask, 0, [](auto a, auto b) { return a + b; });
  }
  void cuda(const Tensor& x, Tensor& out) const override { cuda::reduce(cuda::ReduceFn::kSum, x, out, mask); }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return expand_reduced(grad, s.input_sizes(0), mask, keepdim);
  }
};

// mean = sum / n (in the accumulation type, so no precision is lost to the division):
// d/dx_i = 1 / n over the reduced dims. An empty reduction is 0 / 0 = NaN, as in PyTorch.
struct Mean final : UnaryOp {
  uint64_t mask;
  bool keepdim, with_dims;
  Mean(uint64_t m, bool k, bool d) : mask(m), keepdim(k), with_dims(d) {}
  const char* name() const override { return "mean"; }
  std::string node_name() const override { return with_dims ? "MeanBackward1" : "MeanBackward0"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    double n = static_cast<double>(detail::reduced_numel(x.sizes(), mask));
    visit_float_dtype(x.dtype(), name(), [&]<typename T>() {
      T* o = static_cast<T*>(out.data_ptr());
      cpu::cpu_reduce<T, double>(
          x, mask, 0.0,
          [](double acc, T v, int64_t) { return acc + static_cast<double>(static_cast<opmath_t<T>>(v)); },
          [](double a, double b) { return a + b; },
          [o, n](int64_t i, double acc) { o[i] = static_cast<T>(acc / n); },
          /*reorder=*/true);
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::reduce(cuda::ReduceFn::kMean, x, out, mask);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    double n = static_cast<double>(detail::reduced_numel(s.input_sizes(0), mask));
    return expand_reduced(grad, s.input_sizes(0), mask, keepdim) / n;
  }
};

/// The gradient of prod along `dim` that stays right when the input holds zeros: the product
/// of the others, as an exclusive cumprod from the left times one from the right:
///   input [a, b, c] -> left [1, a, ab], right [bc, c, 1], product [bc, ac, ab].
/// `grad` has size 1 along dim.
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& x, int64_t dim) {
  if (x.numel() == 0) return grad.expand(x.sizes());
  int64_t n = x.size(dim);
  if (n == 1) return grad;
  DimVector ones_size(x.sizes());
  ones_size[dim] = 1;
  Tensor one = ones(ones_size, x.options());
  Tensor left = cat({one, x.narrow(dim, 0, n - 1)}, dim).cumprod(dim);
  Tensor right = cat({one, x.narrow(dim, 1, n - 1).flip({dim})}, dim).cumprod(dim).flip({dim});
  return grad * (left * right);
}

// prod: d/dx_i prod(x) = prod_{j != i} x_j. Without zeros that is result / x_i; with zeros
// result / x is 0/0, so the products of the others are built from cumulative products.
struct Prod final : UnaryOp {
  // On CPU's float32 list; CUDA's fp32_set_opt_dtype (float32 unless a dtype is asked for).
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32Both;
  uint64_t mask;
  bool keepdim;
  std::optional<int64_t> dim;  // nullopt: all dims
  Prod(uint64_t m, bool k, std::optional<int64_t> d) : mask(m), keepdim(k), dim(d) {}
  const char* name() const override { return "prod"; }
  std::string node_name() const override { return dim ? "ProdBackward1" : "ProdBackward0"; }
  Save saves() const override { return Save::kBoth; }
  void cpu(const Tensor& x, Tensor& out) const override {
    arith_reduce(x, out, mask, 1, [](auto a, auto b) { return a * b; });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::reduce(cuda::ReduceFn::kProd, x, out, mask);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    Tensor x = s.input(0);
    if (x.dim() == 0) return grad;
    Tensor g = unsqueeze_reduced(grad, x.dim(), mask, keepdim);
    Tensor result = unsqueeze_reduced(s.output(), x.dim(), mask, keepdim);
    if (!eq(x, 0).any().item<bool>()) return g * (result / x);
    if (dim) return prod_safe_zeros_backward(g, x, *dim);
    return prod_safe_zeros_backward(g.reshape({1}), x.reshape({-1}), 0).view(x.sizes());
  }
};

// var = sum((x - mean)^2) / (N - correction), std = sqrt(var).
// d var / dx_i = 2 (x_i - mean) / (N - correction); d std = d var / (2 std), taken as 0
// where std = 0 (as PyTorch, instead of 0 * inf).
struct VarStd final : UnaryOp {
  uint64_t mask;
  bool keepdim;
  double correction;
  bool take_sqrt;
  VarStd(uint64_t m, bool k, double c, bool sq) : mask(m), keepdim(k), correction(c), take_sqrt(sq) {}
  const char* name() const override { return take_sqrt ? "std" : "var"; }
  Save saves() const override { return take_sqrt ? Save::kBoth : Save::kInputs; }
  // Two passes: the mean, then the squared deviations from it. The deviations' own sum
  // corrects for the rounding of the mean (the "corrected two-pass" algorithm), so the
  // result is as accurate as Welford's without a division per element.
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_float_dtype(x.dtype(), name(), [&]<typename T>() {
      using M = opmath_t<T>;
      T* o = static_cast<T*>(out.data_ptr());
      double n = static_cast<double>(detail::reduced_numel(x.sizes(), mask));
      std::vector<double> mean(out.numel());
      cpu::cpu_reduce<T, double>(
          x, mask, 0.0, [](double a, T v, int64_t) { return a + static_cast<double>(static_cast<M>(v)); },
          [](double a, double b) { return a + b; }, [&mean, n](int64_t i, double sum) { mean[i] = sum / n; },
          /*reorder=*/true);
      double corr = correction;
      bool sq = take_sqrt;
      cpu::cpu_reduce<T, Deviations>(
          x, mask,
          [&mean](int64_t i) {
            return Deviations{mean[i], 0, 0};
          },
          [](Deviations a, T v, int64_t) { return var_step(a, static_cast<double>(static_cast<M>(v))); },
          [](Deviations a, const Deviations& b) { return var_combine(a, b); },
          [o, n, corr, sq](int64_t i, const Deviations& a) {
            o[i] = static_cast<T>(var_finish(a, n, corr, sq));
          },
          /*reorder=*/true);
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::reduce(take_sqrt ? cuda::ReduceFn::kStd : cuda::ReduceFn::kVar, x, out, mask, correction);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    Tensor x = s.input(0);
    Tensor g = unsqueeze_reduced(grad, x.dim(), mask, keepdim);
    if (take_sqrt) {
      Tensor r = unsqueeze_reduced(s.output(), x.dim(), mask, keepdim);
      g = masked_fill(g / (r * 2), eq(r, 0), 0);
    }
    double dof = static_cast<double>(detail::reduced_numel(x.sizes(), mask)) - correction;
    return (2.0 / dof) * g * (x - x.mean(detail::mask_dims(mask, x.dim()), true));
  }
};

// logsumexp(x) = log(sum(exp(x))), computed stably; d/dx_i = exp(x_i - logsumexp(x)).
struct LogSumExp final : UnaryOp {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  uint64_t mask;
  bool keepdim;
  LogSumExp(uint64_t m, bool k) : mask(m), keepdim(k) {}
  const char* name() const override { return "logsumexp"; }
  Save saves() const override { return Save::kBoth; }
  // Two passes: each output's max, then log(sum(exp(x - max))) + max, which cannot overflow.
  // An infinite max shifts by 0 instead (inf - inf would be NaN): all -inf (or no elements)
  // gives log(0) = -inf, a +inf gives inf; a NaN max makes the sum NaN.
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_float_dtype(x.dtype(), name(), [&]<typename T>() {
      using M = opmath_t<T>;
      using A = LseAcc<M>;
      std::vector<M> shift(out.numel());
      auto pick = [](M a, M v) { return pick_extreme<true>(a, v); };
      cpu::cpu_reduce<T, M>(
          x, mask, extreme_init<true, M>(), [&pick](M a, T v, int64_t) { return pick(a, static_cast<M>(v)); },
          pick, [&shift](int64_t i, M m) { shift[i] = lse_shift(m); }, /*reorder=*/true);
      T* o = static_cast<T*>(out.data_ptr());
      cpu::cpu_reduce<T, A>(
          x, mask,
          [&shift](int64_t i) {
            return A{shift[i], 0};
          },
          [](A a, T v, int64_t) { return lse_step(a, static_cast<M>(v)); },
          [](A a, const A& b) { return lse_combine(a, b); },
          [o](int64_t i, const A& a) { o[i] = static_cast<T>(lse_finish(a)); }, /*reorder=*/true);
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::reduce(cuda::ReduceFn::kLogSumExp, x, out, mask);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    Tensor x = s.input(0);
    Tensor g = unsqueeze_reduced(grad, x.dim(), mask, keepdim);
    return g * exp(x - unsqueeze_reduced(s.output(), x.dim(), mask, keepdim));
  }
};

/// all/any: logical reductions producing bool (uint8 for uint8 input, as PyTorch); no gradient.
Tensor logical_reduce(const Tensor& x, uint64_t mask, bool keepdim, bool is_all) {
  ScalarType out_t = x.dtype() == kByte ? kByte : kBool;
  Tensor out =
      empty(reduced_shape(x.sizes(), mask, keepdim), TensorOptions().dtype(out_t).device(x.device()));
  if (x.is_cuda()) {
    cuda::reduce(is_all ? cuda::ReduceFn::kAll : cuda::ReduceFn::kAny, x, out, mask);
    return out;
  }
  visit_dtype(x.dtype(), [&]<typename T>() {
    char* o = static_cast<char*>(out.data_ptr());
    cpu::cpu_reduce<T, bool>(
        x, mask, is_all,
        [is_all](bool acc, T v, int64_t) {
          bool nz = static_cast<opmath_t<T>>(v) != 0;
          return is_all ? (acc && nz) : (acc || nz);
        },
        [is_all](bool a, bool b) { return is_all ? (a && b) : (a || b); },
        [o](int64_t i, bool acc) { o[i] = acc; }, /*reorder=*/true);
  });
  return out;
}

void check_var_dtype(const Tensor& x) {
  EMBER_CHECK(x.is_floating_point(), "std and var only support floating point and complex dtypes");
}

Tensor var_std(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction,
               bool keepdim, bool take_sqrt) {
  check_var_dtype(x);
  uint64_t mask = dim_mask(dim.value_or(IntArrayRef{}), x.dim());
  double c = correction ? correction->toDouble() : 1.0;
  return run_op(VarStd{mask, keepdim, c, take_sqrt}, {x},
                OutSpec{reduced_shape(x.sizes(), mask, keepdim), x.dtype()});
}

/// mean over `dim` (all dims when !with_dims).
Tensor mean_impl(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype,
                 bool with_dims) {
  ScalarType t = dtype.value_or(x.dtype());
  EMBER_CHECK(is_floating_point(t), "mean(): could not infer output dtype. ", dtype ? "Optional" : "Input",
              " dtype must be either a floating point or complex dtype. Got: ", scalar_type_name(t));
  uint64_t mask = dim_mask(dim, x.dim());
  return run_op(Mean{mask, keepdim, with_dims}, {x.to(t)},
                OutSpec{reduced_shape(x.sizes(), mask, keepdim), t});
}

}  // namespace

Tensor all(const Tensor& x) { return logical_reduce(x, dim_mask({}, x.dim()), false, true); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  return logical_reduce(x, dim_mask(IntArrayRef(dim), x.dim()), keepdim, true);
}
Tensor any(const Tensor& x) { return logical_reduce(x, dim_mask({}, x.dim()), false, false); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return logical_reduce(x, dim_mask(IntArrayRef(dim), x.dim()), keepdim, false);
}
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return ember::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return ember::any(*this, dim, keepdim); }

Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Sum::kAutocast, [](const Tensor& t, IntArrayRef d, bool k, std::optional<ScalarType> o) { return sum(t, d, k, o); }, x, dim, keepdim, dtype);
  uint64_t mask = dim_mask(dim, x.dim());
  ScalarType out_t = sum_dtype(x.dtype(), dtype);
  return run_op(Sum{mask, keepdim, true}, {arith_reduce_input(x, out_t)},
                OutSpec{reduced_shape(x.sizes(), mask, keepdim), out_t});
}

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Sum::kAutocast, [](const Tensor& t, std::optional<ScalarType> o) { return sum(t, o); }, x, dtype);
  uint64_t mask = dim_mask({}, x.dim());
  ScalarType out_t = sum_dtype(x.dtype(), dtype);
  return run_op(Sum{mask, false, false}, {arith_reduce_input(x, out_t)},
                OutSpec{reduced_shape(x.sizes(), mask, false), out_t});
}

Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return mean_impl(x, dim, keepdim, dtype, true);
}

Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) {
  return mean_impl(x, {}, false, dtype, false);
}

Tensor prod(const Tensor& x, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Prod::kAutocast, [](const Tensor& t, std::optional<ScalarType> o) { return prod(t, o); }, x, dtype);
  uint64_t mask = dim_mask({}, x.dim());
  ScalarType out_t = sum_dtype(x.dtype(), dtype);
  return run_op(Prod{mask, false, std::nullopt}, {arith_reduce_input(x, out_t)},
                OutSpec{reduced_shape(x.sizes(), mask, false), out_t});
}

Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Prod::kAutocast, [](const Tensor& t, int64_t d, bool k, std::optional<ScalarType> o) { return prod(t, d, k, o); }, x, dim, keepdim, dtype);
  uint64_t mask = dim_mask(IntArrayRef(dim), x.dim());
  ScalarType out_t = sum_dtype(x.dtype(), dtype);
  int64_t d = maybe_wrap_dim(dim, x.dim());
  return run_op(Prod{mask, keepdim, d}, {arith_reduce_input(x, out_t)},
                OutSpec{reduced_shape(x.sizes(), mask, keepdim), out_t});
}

Tensor var(const Tensor& x, bool unbiased) {
  return var_std(x, std::nullopt, unbiased ? 1 : 0, false, false);
}
Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return var_std(x, dim, unbiased ? 1 : 0, keepdim, false);
}
Tensor var(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim) {
  return var_std(x, dim, correction, keepdim, false);
}
Tensor std(const Tensor& x, bool unbiased) { return var_std(x, std::nullopt, unbiased ? 1 : 0, false, true); }
Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return var_std(x, dim, unbiased ? 1 : 0, keepdim, true);
}
Tensor std(const Tensor& x, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim) {
  return var_std(x, dim, correction, keepdim, true);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, std::optional<IntArrayRef> dim,
                                    std::optional<Scalar> correction, bool keepdim) {
  check_var_dtype(x);
  IntArrayRef dims = dim.value_or(IntArrayRef{});
  return {var_std(x, dims, correction, keepdim, false), mean(x, dims, keepdim)};
}

Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(LogSumExp::kAutocast, &logsumexp, x, dim, keepdim);
  uint64_t mask = dim_mask(dim, x.dim());
  ScalarType t = promote_to_float(x.dtype());
  return run_op(LogSumExp{mask, keepdim}, {x.to(t)}, OutSpec{reduced_shape(x.sizes(), mask, keepdim), t});
}

Tensor sum_to_size(const Tensor& x, IntArrayRef size) {
  if (x.sizes().equals(size)) return x;
  int64_t lead = x.dim() - static_cast<int64_t>(size.size());
  EMBER_CHECK(lead >= 0, "size {", size, "} is not expandable to size {", x.sizes(), "}.");
  DimVector dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
      continue;
    }
    int64_t target = size[d - lead];
    EMBER_CHECK(target == x.size(d) || target == 1, "size {", size, "} is not expandable to size {",
                x.sizes(), "}.");
    if (target == 1 && x.size(d) != 1) dims.push_back(d);
  }
  Tensor r = dims.empty() ? x : sum(x, dims, true);
  return lead > 0 || !r.sizes().equals(size) ? r.view(size) : r;
}

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return ember::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return ember::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return ember::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::var(bool unbiased) const { return ember::var(*this, unbiased); }
Tensor Tensor::var(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::var(std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim) const {
  return ember::var(*this, dim, correction, keepdim);
}
Tensor Tensor::std(bool unbiased) const { return ember::std(*this, unbiased); }
Tensor Tensor::std(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std(std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim) const {
  return ember::std(*this, dim, correction, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const {
  return ember::logsumexp(*this, dim, keepdim);
}

}  // namespace ember
