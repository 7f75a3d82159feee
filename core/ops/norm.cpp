// norm: vector p-norms over all elements or over some dims, (sum |x|^p)^(1/p), with the
// special cases PyTorch has: p = 0 (count of nonzeros), 1, 2, inf (max |x|), -inf (min |x|).
#include <cmath>

#include "ember/core/autocast.h"
#include "ember/core/cpu/reduce.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/norm.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/reduce_common.h"
#include "ember/core/ops/reduce_math.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/ops/unary.h"
#include "ember/cuda/reduce.h"

namespace ember {
namespace {

using detail::unsqueeze_reduced;

/// out = the p-norm of x over `mask` with reduce_math.h's terms of kind K (a constant here,
/// so their switches fold away).
template <NormKind K>
void norm_reduce(const Tensor& x, Tensor& out, uint64_t mask, double p, bool empty) {
  visit_float_dtype(x.dtype(), "norm", [&]<typename T>() {
    T* o = static_cast<T*>(out.data_ptr());
    cpu::cpu_reduce<T, double>(
        x, mask, norm_init(K),
        [p](double acc, T v, int64_t) {
          return norm_step(K, acc, static_cast<double>(static_cast<opmath_t<T>>(v)), p);
        },
        [](double a, double b) { return norm_combine(K, a, b); },
        [o, p, empty](int64_t i, double acc) { o[i] = static_cast<T>(norm_finish(K, acc, p, empty)); },
        /*reorder=*/true);
  });
}

// norm: the gradient is PyTorch's norm_backward, with the norm r = ||x||_p:
//   p = 1: sign(x);  p = 2: x / r (0 where r = 0);  p = +-inf: sign(x), shared evenly by the
//   elements whose |x| equals r (or is NaN);  p < 1: sign(x) |x|^(p-1) r^(1-p) (0 where x = 0);
//   otherwise sign(x) |x|^(p-1) / r^(p-1) (0 where r = 0);  p = 0: no gradient.
struct Norm final : UnaryOp {
  // CUDA autocast computes norms in float32 (fp32_append_dtype).
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  double p;
  uint64_t mask;
  bool keepdim;
  Norm(double pv, uint64_t m, bool k) : p(pv), mask(m), keepdim(k) {}
  const char* name() const override { return "norm"; }
  std::string node_name() const override { return "NormBackward1"; }  // PyTorch's overload number
  Save saves() const override { return Save::kBoth; }
  void cpu(const Tensor& x, Tensor& out) const override {
    bool empty = detail::reduced_numel(x.sizes(), mask) == 0;
    switch (norm_kind(p)) {
      case NormKind::kTwo:
        return norm_reduce<NormKind::kTwo>(x, out, mask, p, empty);
      case NormKind::kOne:
        return norm_reduce<NormKind::kOne>(x, out, mask, p, empty);
      case NormKind::kZero:
        return norm_reduce<NormKind::kZero>(x, out, mask, p, empty);
      case NormKind::kInf:
        return norm_reduce<NormKind::kInf>(x, out, mask, p, empty);
      case NormKind::kNegInf:
        return norm_reduce<NormKind::kNegInf>(x, out, mask, p, empty);
      case NormKind::kGeneral:
        return norm_reduce<NormKind::kGeneral>(x, out, mask, p, empty);
    }
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::reduce(cuda::ReduceFn::kNorm, x, out, mask, p);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    if (p == 0) return {};
    Tensor x = s.input(0);
    Tensor g = unsqueeze_reduced(grad, x.dim(), mask, keepdim);
    Tensor r = unsqueeze_reduced(s.output(), x.dim(), mask, keepdim);
    if (p == 1) return sign(x) * g;
    if (p == 2) return g * masked_fill(x / r, eq(r, 0), 0);
    Tensor ax = abs(x);
    if (std::isinf(p)) {
      Tensor ties = logical_or(eq(ax, r), isnan(ax));
      return sign(x) * (g / ties.sum(detail::mask_dims(mask, x.dim()), true) * ties);
    }
    if (p < 1) return sign(x) * masked_fill(pow(ax, p - 1), eq(x, 0), 0) * g * pow(r, 1 - p);
    return sign(x) * pow(ax, p - 1) * masked_fill(g / pow(r, p - 1), eq(r, 0), 0);
  }
};

}  // namespace

Tensor norm(const Tensor& x, std::optional<Scalar> p, IntArrayRef dim, bool keepdim) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Norm::kAutocast, [](const Tensor& t, std::optional<Scalar> q, IntArrayRef d, bool k) { return norm(t, q, d, k); }, x, p, dim, keepdim);
  EMBER_CHECK(x.is_floating_point(), "norm(): input dtype should be either floating point or complex. Got ",
              scalar_type_name(x.dtype()), " instead.");
  uint64_t mask = dim_mask(dim, x.dim());
  double pv = p ? p->toDouble() : 2.0;
  return run_op(Norm{pv, mask, keepdim}, {x},
                OutSpec{detail::reduced_shape(x.sizes(), mask, keepdim), x.dtype()});
}

Tensor norm(const Tensor& x, const Scalar& p) { return norm(x, p, {}, false); }

Tensor Tensor::norm(const Scalar& p) const { return ember::norm(*this, p); }
Tensor Tensor::norm(std::optional<Scalar> p, IntArrayRef dim, bool keepdim) const {
  return ember::norm(*this, p, dim, keepdim);
}

}  // namespace ember
