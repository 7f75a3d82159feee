// softmax / log_softmax: forward kernels (max-subtracted, one pass per row over the softmax
// dim; a fast path when that dim is the innermost), the backward ops (_softmax_backward_data,
// _log_softmax_backward_data) with their own kernels, and a double-precision reference loop.
// On CUDA tensors both ops call cuda/softmax.h.
// The backward ops' own backward is built from public ops, so double backward works.
#include "ember/core/ops/softmax.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/softmax_math.h"
#include "ember/core/ops/unary.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/softmax.h"

namespace ember {
namespace {

/// A contiguous tensor viewed as outer x n x inner, softmax running over n.
struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};

Geom geom_of(IntArrayRef sizes, int64_t dim) {
  Geom g;
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (i < dim) g.outer *= sizes[i];
    else if (i == dim) g.n = sizes[i];
    else g.inner *= sizes[i];
  }
  return g;
}

/// The kernels read raw memory, so inputs are made dense first (outside autograd).
Tensor dense(const Tensor& t) { return t.is_contiguous() ? t : t.detach().contiguous(); }

/// Outer slices per parallel chunk, so one chunk covers about kGrainSize elements.
int64_t grain_for(int64_t slice_len) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, slice_len)); }

template <class M>
constexpr M kNegInf = -std::numeric_limits<M>::infinity();

/// e^x for float without a libm call, so the row loops vectorize (glibc's expf is one call
/// per element and dominated the kernels). x = n ln2 + r with |r| <= ln2/2; e^r by Cephes'
/// degree-6 polynomial (max relative error 1.2e-7, about 1 ulp); 2^n written straight into
/// the exponent bits, n rounded by the 1.5 * 2^23 trick. The range tests compare bit
/// patterns and select with masks: float compares or branches would stop GCC vectorizing
/// (under -ftrapping-math). Below -87.3 (float underflow) the result is 0, so e^-inf = 0;
/// above 88.37 it is inf; NaN stays NaN.
inline float exp_float(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr uint32_t kUnder = std::bit_cast<uint32_t>(-87.3f), kOver = std::bit_cast<uint32_t>(88.37f);
  constexpr uint32_t kNegInfBits = 0xFF800000u, kInfBits = 0x7F800000u;
  uint32_t xb = std::bit_cast<uint32_t>(x);
  uint32_t under = 0u - static_cast<uint32_t>((xb > kUnder) & (xb <= kNegInfBits));  // all ones if x < -87.3
  uint32_t over = 0u - static_cast<uint32_t>((xb > kOver) & (xb <= kInfBits));        // all ones if x > 88.37
  float t = x * 1.44269504088896341f + kMagic;
  uint32_t n = std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kMagic);  // round(x / ln2), mod 2^32
  float fn = t - kMagic;
  float r = x - fn * 0.693359375f - fn * -2.12194440e-4f;  // x - n ln2, ln2 split in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = (1.0f + r + r * r * p) * std::bit_cast<float>((n + 127u) << 23);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(y) & ~(under | over)) | (kInfBits & over));
}

/// e^x in the kernels' compute type: the vectorizable form for float, libm for double.
template <class M>
inline M exp_m(M x) {
  if constexpr (std::is_same_v<M, float>) return exp_float(x);
  else return std::exp(x);
}

/// exp_m as the `exp` of softmax_math.h's terms.
struct FastExp {
  template <class M>
  M operator()(M v) const {
    return exp_m(v);
  }
};

// ---- forward ----------------------------------------------------------------------------------

// Rows are contiguous: max, then sum of exp(x - max), then the normalised values. A NaN
// anywhere in a row makes the sum NaN and so every output of the row, as in PyTorch.
template <class T, bool Log>
void forward_lastdim(const T* x, T* y, int64_t rows, int64_t n) {
  using M = opmath_t<T>;
  using F = SoftmaxFn<Log>;
  parallel_for(rows, grain_for(n), [=](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      // The simd reductions fix the summation order by the vector width, never by threads.
      M mx = kNegInf<M>;
#pragma omp simd reduction(max : mx)
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, static_cast<M>(xr[j]));
      M sum = 0;
      if constexpr (Log) {
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; ++j) sum += exp_m(static_cast<M>(xr[j]) - mx);
        M lse = F::row_constant(mx, sum);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) yr[j] = static_cast<T>(F::out(static_cast<M>(xr[j]), M(0), lse));
      } else if constexpr (std::is_same_v<T, M>) {
        // Keep the exponentials in the output and scale them: one exp per element.
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; ++j) {
          yr[j] = exp_m(xr[j] - mx);
          sum += yr[j];
        }
        M inv = F::row_constant(mx, sum);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) yr[j] = F::out(M(0), yr[j], inv);
      } else {
        // 16-bit outputs would round the stored exponentials; recompute them in M instead.
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; ++j) sum += exp_m(static_cast<M>(xr[j]) - mx);
        M inv = F::row_constant(mx, sum);
        for (int64_t j = 0; j < n; ++j) {
          M v = static_cast<M>(xr[j]);
          yr[j] = static_cast<T>(F::out(v, exp_m(v - mx), inv));
        }
      }
    }
  });
}

// The softmax dim has stride `inner`: each outer slice keeps `inner` running maxima and sums
// and walks the slice row by row, so memory is read in order.
template <class T, bool Log>
void forward_inner(const T* x, T* y, Geom g) {
  using M = opmath_t<T>;
  using F = SoftmaxFn<Log>;
  parallel_for(g.outer, grain_for(g.n * g.inner), [=](int64_t b, int64_t e) {
    std::vector<M> mx(g.inner), acc(g.inner);
    for (int64_t o = b; o < e; ++o) {
      const T* xo = x + o * g.n * g.inner;
      T* yo = y + o * g.n * g.inner;
      std::fill(mx.begin(), mx.end(), kNegInf<M>);
      std::fill(acc.begin(), acc.end(), M(0));
      for (int64_t j = 0; j < g.n; ++j)
        for (int64_t i = 0; i < g.inner; ++i) mx[i] = std::max(mx[i], static_cast<M>(xo[j * g.inner + i]));
      // Plain softmax in float/double keeps the exponentials in the output (one exp each).
      constexpr bool keep_exp = !Log && std::is_same_v<T, M>;
      for (int64_t j = 0; j < g.n; ++j)
        for (int64_t i = 0; i < g.inner; ++i) {
          M v = exp_m(static_cast<M>(xo[j * g.inner + i]) - mx[i]);
          if constexpr (keep_exp) yo[j * g.inner + i] = v;
          acc[i] += v;
        }
      for (int64_t i = 0; i < g.inner; ++i) acc[i] = F::row_constant(mx[i], acc[i]);
      for (int64_t j = 0; j < g.n; ++j) {
        for (int64_t i = 0; i < g.inner; ++i) {
          int64_t k = j * g.inner + i;
          M v = static_cast<M>(xo[k]);
          if constexpr (keep_exp) yo[k] = F::out(v, yo[k], acc[i]);
          else if constexpr (Log) yo[k] = static_cast<T>(F::out(v, M(0), acc[i]));
          else yo[k] = static_cast<T>(F::out(v, exp_m(v - mx[i]), acc[i]));
        }
      }
    }
  });
}

// ---- backward ---------------------------------------------------------------------------------

// The terms are softmax_math.h's SoftmaxBackwardFn, with the vectorizable exp.

template <class T, bool Log>
void backward_lastdim(const T* g, const T* y, T* gx, int64_t rows, int64_t n) {
  using M = opmath_t<T>;
  using F = SoftmaxBackwardFn<Log>;
  parallel_for(rows, grain_for(n), [=](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* gr = g + r * n;
      const T* yr = y + r * n;
      M s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < n; ++j) s += F::row_term(static_cast<M>(gr[j]), static_cast<M>(yr[j]));
#pragma omp simd
      for (int64_t j = 0; j < n; ++j)
        gx[r * n + j] =
            static_cast<T>(F::grad_in(static_cast<M>(gr[j]), static_cast<M>(yr[j]), s, FastExp{}));
    }
  });
}

template <class T, bool Log>
void backward_inner(const T* g, const T* y, T* gx, Geom geo) {
  using M = opmath_t<T>;
  using F = SoftmaxBackwardFn<Log>;
  parallel_for(geo.outer, grain_for(geo.n * geo.inner), [=](int64_t b, int64_t e) {
    std::vector<M> s(geo.inner);
    for (int64_t o = b; o < e; ++o) {
      int64_t base = o * geo.n * geo.inner;
      std::fill(s.begin(), s.end(), M(0));
      for (int64_t j = 0; j < geo.n; ++j)
        for (int64_t i = 0; i < geo.inner; ++i) {
          int64_t k = base + j * geo.inner + i;
          s[i] += F::row_term(static_cast<M>(g[k]), static_cast<M>(y[k]));
        }
      for (int64_t j = 0; j < geo.n; ++j)
        for (int64_t i = 0; i < geo.inner; ++i) {
          int64_t k = base + j * geo.inner + i;
          gx[k] = static_cast<T>(F::grad_in(static_cast<M>(g[k]), static_cast<M>(y[k]), s[i], FastExp{}));
        }
    }
  });
}

const char* kernel_name(bool log, bool lastdim) {
  if (log) return lastdim ? "log_softmax_lastdim_kernel_impl" : "log_softmax_kernel_impl";
  return lastdim ? "softmax_lastdim_kernel_impl" : "softmax_kernel_impl";
}

// ---- ops --------------------------------------------------------------------------------------

// softmax / log_softmax along `dim`. Backward reads the saved output (no recomputation):
// see SoftmaxBackwardData for the formulas.
template <bool Log>
struct Softmax final : UnaryOp {
  // CUDA runs softmax in float32 when no dtype is asked for (PyTorch's fp32_set_opt_dtype);
  // CPU autocast leaves it alone.
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  int64_t dim;
  explicit Softmax(int64_t d) : dim(d) {}
  const char* name() const override { return Log ? "_log_softmax" : "_softmax"; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const Tensor& x, Tensor& out) const override {
    if (x.numel() == 0) return;
    Tensor xd = dense(x);
    Geom g = geom_of(x.sizes(), dim);
    visit_float_dtype(x.dtype(), kernel_name(Log, g.inner == 1), [&]<typename T>() {
      if (g.inner == 1) forward_lastdim<T, Log>(xd.data_ptr<T>(), out.data_ptr<T>(), g.outer, g.n);
      else forward_inner<T, Log>(xd.data_ptr<T>(), out.data_ptr<T>(), g);
    });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    if (x.numel() == 0) return;
    cuda::softmax(dense(x), out, dim, Log);
  }
  Tensor backward(const SavedTensors& s, const Tensor& g) const override {
    return Log ? _log_softmax_backward_data(g, s.output(), dim) : _softmax_backward_data(g, s.output(), dim);
  }
};

// The gradient of softmax / log_softmax as an op of (g, y), with a fused kernel.
// Its own backward (double backward), with s = sum over dim:
//   softmax:     gx = y (g - s(g y))        d/dg = softmax_backward(gg, y) (the Jacobian
//                                           diag(y) - y y^T is symmetric)
//                                           d/dy = gg (g - s(g y)) - g s(gg y)
//   log_softmax: gx = g - e^y s(g)          d/dg = gg - s(gg e^y)
//                                           d/dy = -gg e^y s(g)
template <bool Log>
struct SoftmaxBackwardData final : Op {
  int64_t dim;
  explicit SoftmaxBackwardData(int64_t d) : dim(d) {}
  const char* name() const override { return Log ? "_log_softmax_backward_data" : "_softmax_backward_data"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (out[0].numel() == 0) return;
    Tensor g = dense(in[0]), y = dense(in[1]);
    Geom geo = geom_of(y.sizes(), dim);
    visit_float_dtype(y.dtype(), name(), [&]<typename T>() {
      if (geo.inner == 1) backward_lastdim<T, Log>(g.data_ptr<T>(), y.data_ptr<T>(), out[0].data_ptr<T>(), geo.outer, geo.n);
      else backward_inner<T, Log>(g.data_ptr<T>(), y.data_ptr<T>(), out[0].data_ptr<T>(), geo);
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    if (out[0].numel() == 0) return;
    cuda::softmax_backward(dense(in[0]), dense(in[1]), out[0], dim, Log);
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    Tensor g = s.input(0), y = s.input(1), gg = grads[0];
    Tensor dg, dy;
    if constexpr (Log) {
      Tensor ey = y.exp();
      if (s.needs_grad(0)) dg = gg - (gg * ey).sum({dim}, true);
      if (s.needs_grad(1)) dy = -(gg * ey) * g.sum({dim}, true);
    } else {
      if (s.needs_grad(0)) dg = _softmax_backward_data(gg, y, dim);
      if (s.needs_grad(1)) dy = gg * (g - (g * y).sum({dim}, true)) - g * (gg * y).sum({dim}, true);
    }
    return {dg, dy};
  }
};

template <bool Log>
Tensor softmax_impl(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  int64_t d = maybe_wrap_dim(dim, x.dim());
  Tensor in = dtype ? x.to(*dtype) : x;
  EMBER_CHECK(in.is_floating_point(), "\"", kernel_name(Log, in.dim() == 0 || d == in.dim() - 1),
              "\" not implemented for '", scalar_type_name(in.dtype()), "'");
  return run_op(Softmax<Log>{d}, {in}, OutSpec{DimVector(in.sizes()), in.dtype()});
}

template <bool Log>
Tensor backward_impl(const Tensor& grad, const Tensor& output, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, output.dim());
  Tensor g = grad.dtype() == output.dtype() ? grad : grad.to(output.dtype());
  EMBER_CHECK(g.sizes().equals(output.sizes()), "softmax backward: grad of shape ", g.sizes(),
              " does not match output of shape ", output.sizes());
  return run_op(SoftmaxBackwardData<Log>{d}, {g, output}, OutSpec{DimVector(output.sizes()), output.dtype()});
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Softmax<false>::kAutocast, &softmax, x, dim, dtype);
  return softmax_impl<false>(x, dim, dtype);
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Softmax<true>::kAutocast, &log_softmax, x, dim, dtype);
  return softmax_impl<true>(x, dim, dtype);
}
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const { return ember::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}

Tensor _softmax_backward_data(const Tensor& grad, const Tensor& output, int64_t dim) {
  return backward_impl<false>(grad, output, dim);
}
Tensor _log_softmax_backward_data(const Tensor& grad, const Tensor& output, int64_t dim) {
  return backward_impl<true>(grad, output, dim);
}

namespace detail {

// The oracle: every (outer, inner) row in double, written as the textbook formula.
Tensor softmax_reference(const Tensor& x, int64_t dim, bool log) {
  NoGradGuard no_grad;
  Tensor xd = x.detach().to(kDouble).contiguous();
  Tensor out = empty(x.sizes(), kDouble);
  Geom g = geom_of(x.sizes(), maybe_wrap_dim(dim, x.dim()));
  const double* px = xd.data_ptr<double>();
  double* po = out.data_ptr<double>();
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t i = 0; i < g.inner; ++i) {
      auto at = [&](int64_t j) { return (o * g.n + j) * g.inner + i; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < g.n; ++j) mx = std::max(mx, px[at(j)]);
      for (int64_t j = 0; j < g.n; ++j) sum += std::exp(px[at(j)] - mx);
      for (int64_t j = 0; j < g.n; ++j)
        po[at(j)] = log ? px[at(j)] - mx - std::log(sum) : std::exp(px[at(j)] - mx) / sum;
    }
  }
  return out;
}

}  // namespace detail
}  // namespace ember
