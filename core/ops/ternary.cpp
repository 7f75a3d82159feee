// Elementwise ops of three operands: where, lerp, addcmul, addcdiv, and masked_fill (whose
// fill value is a third, 0-dim operand). All broadcast their operands as binary ops do.
#include <string>

#include "ember/core/autocast.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/binary_internal.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/ops/ternary_math.h"
#include "ember/cuda/binary.h"

namespace ember {

using namespace binary_detail;

namespace {

DimVector broadcast3(const Tensor& a, const Tensor& b, const Tensor& c) {
  return broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes()), c.sizes());
}

// ---- where ---------------------------------------------------------------------------------

// where(cond, a, b) = cond ? a : b: the gradient goes to a where cond holds, to b elsewhere.
struct Where final : Op {
  const char* name() const override { return "where"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    TensorIter iter(out[0], {in[0], in[1], in[2]});
    visit_dtype(out[0].dtype(), [&]<typename T>() { cpu::cpu_map<T, bool, T, T>(iter, WhereFn{}); });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::where(in[0], in[1], in[2], out[0]);
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor cond = s.input(0), ga, gb;
    if (s.needs_grad(1)) ga = where(cond, g[0], 0.0);
    if (s.needs_grad(2)) gb = where(cond, 0.0, g[0]);
    return {Tensor(), ga, gb};
  }
};

Tensor where_in(const Tensor& cond, const Tensor& a, const Tensor& b, ScalarType t) {
  EMBER_CHECK(cond.dtype() == kBool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              scalar_type_name(cond.dtype()));
  return run_op(Where{}, {cond, a.to(t), b.to(t)}, OutSpec{broadcast3(cond, a, b), t});
}

/// The result dtype of two scalars (both "wrapped numbers"): floating beats integer beats bool.
ScalarType scalar_pair_type(const Scalar& a, const Scalar& b) {
  if (a.isFloatingPoint() || b.isFloatingPoint()) return get_default_dtype();
  if (a.isIntegral(false) || b.isIntegral(false)) return kLong;
  return kBool;
}

// ---- lerp ----------------------------------------------------------------------------------

// lerp: start + w (end - start); d/dstart = 1 - w, d/dend = w, d/dw = end - start.
// `weight` holds a scalar weight; without it the weight is the third input.
struct Lerp final : Op {
  std::optional<Scalar> weight;
  explicit Lerp(std::optional<Scalar> w) : weight(w) {}
  const char* name() const override { return "lerp"; }
  std::string node_name() const override { return weight ? "LerpBackward0" : "LerpBackward1"; }
  Save saves() const override { return weight ? Save::kNothing : Save::kInputs; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    if (weight)
      binary_map("lerp_kernel_scalar", in, out[0], LerpScalarFn{weight->toDouble()});
    else
      ternary_map("lerp_kernel_tensor", in, out[0], LerpFn{});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    if (weight)
      cuda_binary_map("lerp_cuda", in, out[0], LerpScalarFn{weight->toDouble()});
    else
      cuda_ternary_map("lerp_cuda", in, out[0], LerpFn{});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gs, ge, gw;
    if (weight) {
      double w = weight->toDouble();
      if (s.needs_grad(0)) gs = g[0] * (1.0 - w);
      if (s.needs_grad(1)) ge = g[0] * w;
      return {gs, ge};
    }
    Tensor w = s.input(2);
    if (s.needs_grad(0)) gs = g[0] * (1 - w);
    if (s.needs_grad(1)) ge = g[0] * w;
    if (s.needs_grad(2)) gw = g[0] * (s.input(1) - s.input(0));
    return {gs, ge, gw};
  }
};

/// lerp does not promote: end (and a tensor weight) must have start's dtype.
void check_lerp_dtype(const Tensor& start, const Tensor& other, const char* what) {
  EMBER_CHECK(start.dtype() == other.dtype(), "expected dtype ", type_meta_name(start.dtype()), " for `",
              what, "` but got dtype ", type_meta_name(other.dtype()));
}

// ---- addcmul, addcdiv ----------------------------------------------------------------------

// addcmul: self + v t1 t2; d/dself = 1, d/dt1 = v t2, d/dt2 = v t1.
// addcdiv: self + v t1 / t2; d/dself = 1, d/dt1 = v / t2, d/dt2 = -v t1 / t2^2.
struct AddC final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kPromoteCudaOnly;
  bool is_div;
  Scalar value;
  AddC(bool d, Scalar v) : is_div(d), value(v) {}
  const char* name() const override { return is_div ? "addcdiv" : "addcmul"; }
  bool elementwise() const override { return true; }
  /// PyTorch converts value to the tensor's dtype first: float16/bfloat16 round it.
  ScalarParam value_in(ScalarType t) const {
    ScalarParam p = param(value);
    if (t == kHalf) p.f = static_cast<float>(static_cast<Half>(p.f));
    if (t == kBFloat16) p.f = static_cast<float>(static_cast<BFloat16>(p.f));
    return p;
  }
  void cpu(const TensorList& in, TensorList& out) const override {
    ScalarParam v = value_in(out[0].dtype());
    if (is_div)
      ternary_map("addcdiv_cpu_out", in, out[0], AddcdivFn{v});
    else
      ternary_map("addcmul_cpu_out", in, out[0], AddcmulFn{v});
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    ScalarParam v = value_in(out[0].dtype());
    if (is_div)
      cuda_ternary_map("addcdiv_cuda", in, out[0], AddcdivFn{v});
    else
      cuda_ternary_map("addcmul_cuda", in, out[0], AddcmulFn{v});
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor t1 = s.input(1), t2 = s.input(2), g1, g2;
    if (is_div) {
      if (s.needs_grad(1)) g1 = g[0] * value / t2;
      if (s.needs_grad(2)) g2 = -(g[0] * value) * t1 / (t2 * t2);
    } else {
      if (s.needs_grad(1)) g1 = g[0] * (t2 * value);
      if (s.needs_grad(2)) g2 = g[0] * (t1 * value);
    }
    return {g[0], g1, g2};
  }
};

void check_addcdiv(const Tensor& t1, const Tensor& t2) {
  EMBER_CHECK(!(is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true)),
              "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
              "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
              "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
              "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
              "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
              "dtypes.");
}

Tensor addc(bool is_div, const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  if (is_div) check_addcdiv(t1, t2);
  ScalarType t = result_type({self, t1, t2});
  return run_op(AddC{is_div, value}, {self.to(t), t1.to(t), t2.to(t)}, OutSpec{broadcast3(self, t1, t2), t});
}

Tensor& addc_(bool is_div, Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  if (is_div) check_addcdiv(t1, t2);
  check_can_cast(result_type({self, t1, t2}), self.dtype());
  check_inplace_shape(self, broadcast3(self, t1, t2));
  return run_inplace_op(AddC{is_div, value}, self, {self, t1.to(self.dtype()), t2.to(self.dtype())});
}

// ---- masked_fill ---------------------------------------------------------------------------

// masked_fill: value where mask, self elsewhere (value is a 0-dim third input). The gradient
// of self is zero under the mask; that of value is the sum of the gradient under the mask.
struct MaskedFill final : Op {
  bool tensor_value;  // masked_fill(mask, Tensor): PyTorch's MaskedFillBackward1
  explicit MaskedFill(bool t) : tensor_value(t) {}
  const char* name() const override { return "masked_fill"; }
  std::string node_name() const override {
    return tensor_value ? "MaskedFillBackward1" : "MaskedFillBackward0";
  }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    // The value is read once rather than broadcast as an operand, so dense self and mask
    // keep cpu_map's contiguous (vectorizable) path.
    TensorIter iter(out[0], {in[0], in[1]});
    visit_dtype(out[0].dtype(), [&]<typename T>() {
      T v = *static_cast<const T*>(in[2].data_ptr());
      cpu::cpu_map<T, T, bool>(iter, [v](T x, bool m) { return MaskedFillFn{}(x, m, v); });
    });
  }
  // The value stays on the device: the kernel reads it as a broadcast operand (no host sync).
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::masked_fill(in[0], in[1], in[2], out[0]);
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor mask = s.input(1), gs, gv;
    if (s.needs_grad(0)) gs = where(mask, 0.0, g[0]);
    if (s.needs_grad(2)) gv = where(mask, g[0], 0.0).sum();
    return {gs, Tensor(), gv};
  }
};

void check_mask(const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              scalar_type_name(mask.dtype()));
}

/// The fill value as a 0-dim operand of self's dtype (a tensor value keeps its gradient).
Tensor fill_value(const Tensor& self, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
              " dimension(s).");
  Tensor v = value.to(self.dtype());
  // As in PyTorch, a CPU 0-dim value may fill a CUDA tensor; the copy keeps its gradient.
  if (v.is_cpu() && self.is_cuda()) v = v.to(self.device());
  return v;
}

Tensor masked_fill_in(const Tensor& self, const Tensor& mask, const Tensor& value, bool tensor_value) {
  check_mask(mask);
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  return run_op(MaskedFill{tensor_value}, {self, mask, value}, OutSpec{shape, self.dtype()});
}

Tensor& masked_fill_in_(Tensor& self, const Tensor& mask, const Tensor& value, bool tensor_value) {
  check_mask(mask);
  check_inplace_shape(self, broadcast_shapes(self.sizes(), mask.sizes()));
  return run_inplace_op(MaskedFill{tensor_value}, self, {self, mask, value});
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return where_in(cond, a, b, result_type(a, b));
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  ScalarType t = result_type(b, a);
  return where_in(cond, wrap_scalar(a, t, b.device()), b, t);
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  ScalarType t = result_type(a, b);
  return where_in(cond, a, wrap_scalar(b, t, a.device()), t);
}
Tensor where(const Tensor& cond, const Scalar& a, const Scalar& b) {
  ScalarType t = scalar_pair_type(a, b);
  return where_in(cond, wrap_scalar(a, t, cond.device()), wrap_scalar(b, t, cond.device()), t);
}

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  check_lerp_dtype(start, end, "end");
  DimVector shape = broadcast_shapes(start.sizes(), end.sizes());
  return run_op(Lerp{weight}, {start, end}, OutSpec{shape, start.dtype()});
}
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  check_lerp_dtype(start, end, "end");
  check_lerp_dtype(start, weight, "weight");
  return run_op(Lerp{std::nullopt}, {start, end, weight},
                OutSpec{broadcast3(start, end, weight), start.dtype()});
}

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(AddC::kAutocast, &addcmul, self, t1, t2, value);
  return addc(false, self, t1, t2, value);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(AddC::kAutocast, &addcdiv, self, t1, t2, value);
  return addc(true, self, t1, t2, value);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill_in(self, mask, wrap_scalar(value, self.dtype(), self.device()), false);
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return masked_fill_in(self, mask, fill_value(self, value), true);
}

// ---- Tensor methods ------------------------------------------------------------------------
Tensor Tensor::where(const Tensor& cond, const Tensor& other) const {
  return ember::where(cond, *this, other);
}

Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return ember::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return ember::lerp(*this, end, weight); }
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  check_lerp_dtype(*this, end, "end");
  check_inplace_shape(*this, broadcast_shapes(sizes(), end.sizes()));
  return run_inplace_op(Lerp{weight}, *this, {*this, end});
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  check_lerp_dtype(*this, end, "end");
  check_lerp_dtype(*this, weight, "weight");
  check_inplace_shape(*this, broadcast3(*this, end, weight));
  return run_inplace_op(Lerp{std::nullopt}, *this, {*this, end, weight});
}

Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcmul(*this, t1, t2, value);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return addc_(false, *this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcdiv(*this, t1, t2, value);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return addc_(true, *this, t1, t2, value);
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& v) const {
  return ember::masked_fill(*this, mask, v);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& v) const {
  return ember::masked_fill(*this, mask, v);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) {
  return masked_fill_in_(*this, mask, wrap_scalar(v, dtype(), device()), false);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& v) {
  return masked_fill_in_(*this, mask, fill_value(*this, v), true);
}

}  // namespace ember
