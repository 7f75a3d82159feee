// Activations (relu, leaky_relu, elu/selu/celu, gelu, silu, mish, softplus, log_sigmoid,
// hardtanh/relu6, threshold, hardshrink, softshrink), the composites rrelu, prelu and glu, and
// clamp. Each op is one struct: its formula (the functor <Op>Fn of core/ops/activation_math.h,
// which the CPU loop and the CUDA kernel both run) and its backward. Piecewise gradients go through constant masks of the forward input
// (unary_internal.h, value_test.h), so double backward works.
#include "ember/core/ops/unary.h"

#include <cmath>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/ops/activation.h"
#include "ember/core/ops/activation_math.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/random.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/ops/unary_internal.h"
#include "ember/core/shape.h"

namespace ember {

using namespace unary_impl;

namespace {

using namespace activation_constants;
constexpr double kInvSqrt2Pi = 0.398942280401432677940;  // 1/sqrt(2 pi)
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- relu family ------------------------------------------------------------------------------

// relu: max(x, 0), nan stays nan. d/dx = 1 where the result is > 0, else 0 (0 at x = 0),
// read off the saved result as PyTorch's threshold_backward does.
struct Relu final : MapOp<Relu, ReluFn> {
  const char* name() const override { return "relu"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return masked(g, const_mask(s.output(), {TestKind::kLessEqual, 0, 0, /*negate=*/true}));
  }
};

// leaky_relu: x for x > 0, slope * x otherwise. d/dx = 1 or slope (slope at 0).
struct LeakyRelu final : MapOp<LeakyRelu, LeakyReluFn> {
  double slope;
  explicit LeakyRelu(const Scalar& s) : slope(s.toDouble()) {}
  const char* name() const override { return "leaky_relu"; }
  LeakyReluFn fn() const { return {slope}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return g * const_select(s.input(0), {TestKind::kGreater, 0}, 1, slope);
  }
};

// elu: scale * x for x > 0, scale * alpha * (e^{input_scale x} - 1) otherwise.
// d/dx = scale, or input_scale * alpha * scale * e^{input_scale x} for x <= 0.
struct Elu final : MapOp<Elu, EluFn> {
  double alpha, scale, input_scale;
  Elu(double a, double s, double i) : alpha(a), scale(s), input_scale(i) {}
  const char* name() const override { return "elu"; }
  EluFn fn() const { return {alpha, scale, input_scale}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    // clamp_max keeps e^{...} finite where it is masked out, so its own gradient is never inf * 0.
    Tensor negative = (x.clamp_max(0) * input_scale).exp() * (input_scale * alpha * scale);
    Tensor positive = const_select(x, {TestKind::kLessEqual, 0, 0, /*negate=*/true}, scale, 0);
    return g * (positive + masked(negative, const_mask(x, {TestKind::kLessEqual, 0})));
  }
};

// threshold: value where x <= threshold, else x. d/dx = 1 where x > threshold (and for nan x),
// else 0 (PyTorch's threshold_backward).
struct Threshold final : MapOp<Threshold, ThresholdFn> {
  double threshold, value;
  Threshold(double t, double v) : threshold(t), value(v) {}
  const char* name() const override { return "threshold"; }
  ThresholdFn fn() const { return {threshold, value}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return masked(g, const_mask(s.input(0), {TestKind::kLessEqual, threshold, 0, /*negate=*/true}));
  }
};

// hardshrink: 0 on [-lambd, lambd], else x. d/dx = 0 on that closed interval, else 1.
struct Hardshrink final : MapOp<Hardshrink, HardshrinkFn> {
  double lambd;
  explicit Hardshrink(double l) : lambd(l) {}
  const char* name() const override { return "hardshrink"; }
  HardshrinkFn fn() const { return {lambd}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return masked(g, const_mask(s.input(0), {TestKind::kInClosed, -lambd, lambd, /*negate=*/true}));
  }
};

// softshrink: x -+ lambd outside [-lambd, lambd], 0 inside. d/dx as hardshrink's.
struct Softshrink final : MapOp<Softshrink, SoftshrinkFn> {
  double lambd;
  explicit Softshrink(double l) : lambd(l) {}
  const char* name() const override { return "softshrink"; }
  SoftshrinkFn fn() const { return {lambd}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return masked(g, const_mask(s.input(0), {TestKind::kInClosed, -lambd, lambd, /*negate=*/true}));
  }
};

// ---- smooth activations ---------------------------------------------------------------------

// gelu: x * Phi(x) with Phi the normal CDF ("none"), or its tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Derivatives in backward.
struct Gelu final : UnaryOp {
  bool tanh_approx;
  explicit Gelu(bool t) : tanh_approx(t) {}
  const char* name() const override { return "gelu"; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    if (out.dtype() == kFloat) {
      if (tanh_approx)
        cpu::unary_vec_kernel(x, out, [](cpu::vec::f8 v) { return cpu::vec::gelu_tanh(v); }, kVecMathGrain);
      else
        cpu::unary_vec_kernel(x, out, [](cpu::vec::f8 v) { return cpu::vec::gelu(v); }, kVecMathGrain);
      return;
    }
    if (tanh_approx) unary_map(name(), x, out, GeluTanhFn{});
    else unary_map(name(), x, out, GeluFn{});
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    check_domain<MapDomain::kFloating>(out.dtype(), name());
    if (tanh_approx) cuda::unary_map(x, out, GeluTanhFn{});
    else cuda::unary_map(x, out, GeluFn{});
  }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    if (!tanh_approx) {
      // d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = e^{-x^2/2} / sqrt(2 pi).
      Tensor cdf = ((x * kSqrt1_2).erf() + 1) * 0.5;
      Tensor pdf = (x * x * -0.5).exp() * kInvSqrt2Pi;
      return g * (cdf + x * pdf);
    }
    // With u = sqrt(2/pi) (x + c x^3), t = tanh u:
    // d/dx 0.5 x (1 + t) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 c x^2).
    Tensor x2 = x * x;
    Tensor t = ((x + x2 * x * kGeluTanhCoef) * kSqrt2OverPi).tanh();
    Tensor du = (x2 * (3 * kGeluTanhCoef) + 1) * kSqrt2OverPi;
    return g * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * du);
  }
};

// silu: x sigmoid(x); d/dx = s (1 + x (1 - s)) with s = sigmoid(x).
struct Silu final : MapOp<Silu, SiluFn> {
  const char* name() const override { return "silu"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    Tensor sig = x.sigmoid();
    return g * (sig * (x * (1 - sig) + 1));
  }
};

// mish: x tanh(softplus(x)); d/dx = t + x sigmoid(x) (1 - t^2) with t = tanh(softplus(x)).
struct Mish final : MapOp<Mish, MishFn> {
  const char* name() const override { return "mish"; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    Tensor t = softplus(x).tanh();  // softplus, not log1p(exp(x)): its gradient stays finite
    return g * (t + x * x.sigmoid() * (1 - t * t));
  }
};

// softplus: log(1 + e^{beta x}) / beta, or x itself where beta x > threshold (for stability).
// d/dx = sigmoid(beta x), or 1 above the threshold.
struct Softplus final : MapOp<Softplus, SoftplusFn> {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  double beta, threshold;
  Softplus(double b, double t) : beta(b), threshold(t) {}
  const char* name() const override { return "softplus"; }
  SoftplusFn fn() const { return {beta, threshold}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    Tensor x = s.input(0);
    ValueTest above{TestKind::kScaledGreater, beta, threshold};
    Tensor linear = const_select(x, above, 1, 0);
    Tensor below = const_mask(x, {TestKind::kScaledGreater, beta, threshold, /*negate=*/true});
    return g * (linear + masked((x * beta).sigmoid(), below));
  }
};

// log_sigmoid: y = log(sigmoid(x)) = -softplus(-x); d/dx = sigmoid(-x) = 1 - e^y = -expm1(y),
// read off the saved result (exact at both ends: -expm1(y) ~ -y for large x, 1 for very
// negative x). ATen's op is log_sigmoid_forward (its second output, a buffer for the CPU
// backward, is not needed here).
struct LogSigmoid final : MapOp<LogSigmoid, LogSigmoidFn> {
  const char* name() const override { return "log_sigmoid_forward"; }
  Save saves() const override { return Save::kOutputs; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override { return -g * s.output().expm1(); }
};

// ---- clamp and hardtanh ---------------------------------------------------------------------

/// An absent clamp bound: -inf/+inf for floats, the dtype's range for integers and bool.
template <class M>
M bound_or_limit(const std::optional<Scalar>& s, bool upper) {
  if (s) return s->to<M>();
  if constexpr (is_float_v<M>) return upper ? std::numeric_limits<M>::infinity() : -std::numeric_limits<M>::infinity();
  else return upper ? std::numeric_limits<M>::max() : std::numeric_limits<M>::lowest();
}

// clamp: min(max(x, lo), hi); nan if x or a bound is nan; lo > hi gives hi (PyTorch).
// d/dx = 1 where lo <= x <= hi, else 0 (also for nan x).
struct Clamp final : UnaryOp {
  std::optional<Scalar> lo, hi;
  Clamp(std::optional<Scalar> l, std::optional<Scalar> h) : lo(l), hi(h) {}
  const char* name() const override { return "clamp"; }
  bool elementwise() const override { return true; }
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_dtype(out.dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      M l = bound_or_limit<M>(lo, false), h = bound_or_limit<M>(hi, true);
      cpu::unary_kernel<T, T>(x, out, [f = ClampFn<M>{l, h}](T v) { return static_cast<T>(f(static_cast<M>(v))); });
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    visit_dtype(out.dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      cuda::clamp(x, Scalar(bound_or_limit<M>(lo, false)), Scalar(bound_or_limit<M>(hi, true)), out);
    });
  }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    double l = lo ? lo->toDouble() : -kInf, h = hi ? hi->toDouble() : kInf;
    return masked(g, const_mask(s.input(0), {TestKind::kInClosed, l, h}));
  }
};

/// One of clamp's gradient masks over same-dtype floating x, lo, hi broadcast to `shape`, as a
/// bool tensor outside autograd.
Tensor clamp_grad_mask(IntArrayRef shape, ClampGradMask which, const Tensor& x, const Tensor& lo, const Tensor& hi) {
  Tensor out = empty(shape, TensorOptions().dtype(kBool).device(x.device()));
  check_domain<MapDomain::kFloating>(x.dtype(), "clamp");
  if (x.is_cuda()) {
    cuda::clamp_grad_mask(which, x, lo, hi, out);
    return out;
  }
  visit_float_dtype(x.dtype(), "clamp", [&]<typename T>() {
    using M = opmath_t<T>;
    TensorIter iter(out, {x, lo, hi});
    cpu::cpu_map<bool, T, T, T>(iter, [which](T v, T l, T h) { return clamp_grad_passes(which, M(v), M(l), M(h)); });
  });
  return out;
}

// clamp with tensor bounds (broadcasting; an absent bound is passed as +-inf / the dtype's
// range). PyTorch's clamp_backward_min_max:
//   dx = g where lo <= x <= hi;  dlo = g where x < lo and lo < hi;  dhi = g where x > hi or hi < lo.
struct ClampTensor final : Op {
  const char* name() const override { return "clamp"; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    visit_dtype(out[0].dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      TensorIter iter(out[0], in);
      cpu::cpu_map<T, T, T, T>(iter, [](T v, T l, T h) {
        return static_cast<T>(ClampTensorFn{}(static_cast<M>(v), static_cast<M>(l), static_cast<M>(h)));
      });
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override { cuda::clamp(in[0], in[1], in[2], out[0]); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor x = s.input(0), lo = s.input(1), hi = s.input(2);
    IntArrayRef shape = g[0].sizes();
    Tensor gx, glo, ghi;
    if (s.needs_grad(0)) gx = masked(g[0], clamp_grad_mask(shape, ClampGradMask::kInput, x, lo, hi));
    if (s.needs_grad(1)) glo = masked(g[0], clamp_grad_mask(shape, ClampGradMask::kMin, x, lo, hi));
    if (s.needs_grad(2)) ghi = masked(g[0], clamp_grad_mask(shape, ClampGradMask::kMax, x, lo, hi));
    return {gx, glo, ghi};
  }
};

/// The dtype clamp computes in: a floating x keeps its dtype; otherwise bounds promote it.
ScalarType clamp_result_type(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  ScalarType t = x.dtype();
  if (x.is_floating_point()) return t;
  if (lo) t = promote_types(t, result_type(x, *lo));
  if (hi) t = promote_types(t, result_type(x, *hi));
  return t;
}

void check_clamp_bounds(bool has_min, bool has_max) {
  EMBER_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
}

/// A 0-dim stand-in for an absent tensor bound.
Tensor limit_bound(ScalarType t, bool upper, Device device) {
  Scalar v = visit_dtype(t, [&]<typename T>() { return Scalar(bound_or_limit<opmath_t<T>>(std::nullopt, upper)); });
  return full({}, v, TensorOptions().dtype(t).device(device));
}

// hardtanh: clamp(x, min_val, max_val) in x's dtype (bounds are cast to it, as PyTorch).
// d/dx = 1 strictly inside (min_val, max_val), else 0 (PyTorch's hardtanh_backward).
struct Hardtanh final : MapOp<Hardtanh, HardtanhFn> {
  double lo, hi;
  Hardtanh(double l, double h) : lo(l), hi(h) {}
  const char* name() const override { return "hardtanh"; }
  HardtanhFn fn() const { return {lo, hi}; }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return masked(g, const_mask(s.input(0), {TestKind::kOutsideOpen, lo, hi, /*negate=*/true}));
  }
};

}  // namespace

// ---- relu family ------------------------------------------------------------------------------

Tensor relu(const Tensor& x) {
  EMBER_CHECK(x.dtype() != kBool, "Boolean inputs not supported for relu");
  return same_dtype_unary<Relu>(x);
}
Tensor Tensor::relu() const { return ember::relu(*this); }
Tensor& Tensor::relu_() {
  EMBER_CHECK(dtype() != kBool, "Boolean inputs not supported for relu");
  return run_inplace_op(Relu{}, *this, {*this});
}

Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  return same_dtype_unary(x, LeakyRelu{negative_slope});
}
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope) {
  return run_inplace_op(LeakyRelu{negative_slope}, x, {x});
}

Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return same_dtype_unary(x, Elu{alpha.toDouble(), scale.toDouble(), input_scale.toDouble()});
}
Tensor selu(const Tensor& x) { return elu(x, kSeluAlpha, kSeluScale, 1); }
Tensor celu(const Tensor& x, const Scalar& alpha) {
  double a = alpha.toDouble();
  EMBER_CHECK(a != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return elu(x, a, 1, 1 / a);
}

Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  return same_dtype_unary(x, Threshold{threshold.toDouble(), value.toDouble()});
}
Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value) {
  return run_inplace_op(Threshold{threshold.toDouble(), value.toDouble()}, x, {x});
}

Tensor hardshrink(const Tensor& x, const Scalar& lambd) {
  return same_dtype_unary(x, Hardshrink{lambd.toDouble()});
}
Tensor softshrink(const Tensor& x, const Scalar& lambd) {
  double l = lambd.toDouble();
  EMBER_CHECK(l >= 0, "lambda must be greater or equal to 0, but found to be ", l, ".");
  return same_dtype_unary(x, Softshrink{l});
}

// rrelu: x for x > 0, x * a otherwise, a ~ U(lower, upper) drawn per element from ember's
// generator when training (PyTorch's rrelu_with_noise: the noise is the slope where x <= 0 and 1
// elsewhere, and the gradient is the noise), a = (lower + upper) / 2 otherwise.
Tensor rrelu(const Tensor& x, const Scalar& lower, const Scalar& upper, bool training) {
  double lo = lower.toDouble(), hi = upper.toDouble();
  EMBER_CHECK(lo <= hi, "Lower bound should be less than or equal to the upper bound");
  if (!training) return leaky_relu(x, (lo + hi) / 2);
  if (!x.is_floating_point())
    detail::throw_error(detail::str_cat("\"rrelu_with_noise\" not implemented for '", scalar_type_name(x.dtype()), "'"));
  Tensor noise;
  {
    NoGradGuard no_grad;
    Tensor slope = rand_like(x) * (hi - lo) + lo;
    noise = where(x.le(0), slope, 1.0);
  }
  return x * noise;
}

// prelu: max(0, x) + weight * min(0, x), weight one value or one per channel (dim 1).
Tensor prelu(const Tensor& x, const Tensor& weight) {
  int64_t n = weight.numel();
  if (n != 1) {
    EMBER_CHECK(x.dim() != 0, "Not allow zero-dim input tensor.");
    int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
    EMBER_CHECK(n == channels, "Mismatch of parameter numbers and input channel size. Found parameter numbers = ", n,
                " and channel size = ", channels, ".");
  }
  EMBER_CHECK(weight.dim() <= 1, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = ", weight.dim());
  Tensor w;
  if (n == 1) {
    w = weight.reshape({});
  } else {
    DimVector shape(static_cast<size_t>(x.dim() - 1), 1);
    shape[0] = n;
    w = weight.reshape(shape);
  }
  return where(x.gt(0), x, x * w);
}

// glu: a * sigmoid(b), a and b the halves of x along dim.
Tensor glu(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, "glu does not support scalars because halving size must be even");
  int64_t d = maybe_wrap_dim(dim, x.dim());
  int64_t n = x.size(d);
  EMBER_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  if (!x.is_floating_point())
    detail::throw_error(detail::str_cat("\"glu\" not implemented for '", scalar_type_name(x.dtype()), "'"));
  return x.narrow(d, 0, n / 2) * x.narrow(d, n / 2, n / 2).sigmoid();
}

// ---- smooth activations ---------------------------------------------------------------------

Tensor gelu(const Tensor& x, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  return same_dtype_unary(x, Gelu{approximate == "tanh"});
}
Tensor silu(const Tensor& x) { return same_dtype_unary<Silu>(x); }
Tensor mish(const Tensor& x) { return same_dtype_unary<Mish>(x); }
Tensor softplus(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Softplus::kAutocast, &softplus, x, beta, threshold);
  return same_dtype_unary(x, Softplus{beta.toDouble(), threshold.toDouble()});
}

Tensor log_sigmoid(const Tensor& x) { return same_dtype_unary<LogSigmoid>(x); }

// ---- hardtanh, relu6 ---------------------------------------------------------------------------

Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  EMBER_CHECK(x.dtype() != kBool, "Bool inputs not supported for hardtanh");
  return same_dtype_unary(x, Hardtanh{min_val.toDouble(), max_val.toDouble()});
}
Tensor relu6(const Tensor& x) { return hardtanh(x, 0, 6); }

// ---- clamp --------------------------------------------------------------------------------------

Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  check_clamp_bounds(min.has_value(), max.has_value());
  ScalarType t = clamp_result_type(x, min, max);
  return run_op(Clamp{min, max}, {x.to(t)}, OutSpec{DimVector(x.sizes()), t});
}

Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  bool has_min = min && min->defined(), has_max = max && max->defined();
  check_clamp_bounds(has_min, has_max);
  TensorList operands{x};
  DimVector shape(x.sizes());
  for (const Tensor* b : {has_min ? &*min : nullptr, has_max ? &*max : nullptr}) {
    if (!b) continue;
    operands.push_back(*b);
    shape = broadcast_shapes(shape, b->sizes());
  }
  ScalarType t = result_type(operands);
  Tensor lo = has_min ? min->to(t) : limit_bound(t, false, x.device());
  Tensor hi = has_max ? max->to(t) : limit_bound(t, true, x.device());
  return run_op(ClampTensor{}, {x.to(t), lo, hi}, OutSpec{shape, t});
}

Tensor clip(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp(x, min, max);
}
Tensor clamp_min(const Tensor& x, const Scalar& min) { return clamp(x, std::optional<Scalar>(min), std::nullopt); }
Tensor clamp_max(const Tensor& x, const Scalar& max) { return clamp(x, std::nullopt, std::optional<Scalar>(max)); }

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  check_clamp_bounds(min.has_value(), max.has_value());
  check_can_cast(clamp_result_type(*this, min, max), dtype());
  return run_inplace_op(Clamp{min, max}, *this, {*this});
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(const Scalar& min) const { return ember::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Scalar& max) const { return ember::clamp_max(*this, max); }

}  // namespace ember
