// Comparisons (eq, ne, lt, le, gt, ge, equal, isclose, allclose), logical and bitwise ops.
// Comparisons compute in the promoted dtype of their operands and produce bool, which carries
// no gradient, so they run under NoGradGuard and record no autograd node.
#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/binary_internal.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/compare_math.h"
#include "ember/core/ops/reduce.h"
#include "ember/cuda/binary.h"

namespace ember {

using namespace binary_detail;

namespace {

// eq/ne/lt/le/gt/ge: a op b in opmath, a bool result (no gradient). Fn: compare_math.h.
template <class Fn>
struct Compare final : Op {
  const char* op_name;
  explicit Compare(const char* n) : op_name(n) {}
  const char* name() const override { return op_name; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override { compare_map(op_name, in, out[0], Fn{}); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::compare_map(in[0], in[1], out[0], Fn{});
  }
};

template <class Fn>
Tensor compare(const char* name, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  ScalarType t = result_type(a, b);
  return run_op(Compare<Fn>{name}, {a.to(t), b.to(t)},
                OutSpec{broadcast_shapes(a.sizes(), b.sizes()), kBool});
}

template <class Fn>
Tensor compare(const char* name, const Tensor& a, const Scalar& b) {
  // The scalar is converted to the promoted dtype first (uint8 < -1 compares with 255, as in PyTorch).
  return compare<Fn>(name, a, wrap_scalar(b, result_type(a, b), a.device()));
}

// isclose (IsCloseFn, compare_math.h). No gradient.
struct IsClose final : Op {
  double rtol, atol;
  bool equal_nan;
  IsClose(double r, double a, bool n) : rtol(r), atol(a), equal_nan(n) {}
  const char* name() const override { return "isclose"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override {
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      const IsCloseFn<T> fn{rtol, atol, equal_nan};
      cpu::binary_kernel<bool, T, T>(in[0], in[1], out[0],
                                     [fn](T a, T b) { return fn(static_cast<M>(a), static_cast<M>(b)); });
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::isclose(in[0], in[1], out[0], rtol, atol, equal_nan);
  }
};

// logical_and/or/xor: operands are first cast to bool (nonzero is true, NaN included).
template <class Fn>
struct Logical final : Op {
  const char* op_name;
  explicit Logical(const char* n) : op_name(n) {}
  const char* name() const override { return op_name; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override { compare_map(op_name, in, out[0], Fn{}); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::compare_map(in[0], in[1], out[0], Fn{});
  }
};

template <class Fn>
Tensor logical(const char* name, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  return run_op(Logical<Fn>{name}, {a.to(kBool), b.to(kBool)},
                OutSpec{broadcast_shapes(a.sizes(), b.sizes()), kBool});
}

/// An op's name and the names of its CPU and CUDA kernels, which PyTorch's errors quote.
struct KernelNames {
  const char* op;
  const char* cpu;
  const char* cuda;
};
constexpr KernelNames kBitwiseAnd{"bitwise_and", "bitwise_and_cpu", "bitwise_and_cuda"};
constexpr KernelNames kBitwiseOr{"bitwise_or", "bitwise_or_cpu", "bitwise_or_cuda"};
constexpr KernelNames kBitwiseXor{"bitwise_xor", "bitwise_xor_cpu", "bitwise_xor_cuda"};

// bitwise_and/or/xor: integer and bool dtypes only, in the promoted dtype. Fn: binary_math.h.
template <class Fn>
struct Bitwise final : Op {
  KernelNames names;
  explicit Bitwise(KernelNames n) : names(n) {}
  const char* name() const override { return names.op; }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override { binary_map(names.cpu, in, out[0], Fn{}); }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda_binary_map(names.cuda, in, out[0], Fn{});
  }
};

template <class Fn>
Tensor bitwise(KernelNames names, const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(Bitwise<Fn>{names}, {p.a, p.b}, p.out);
}

template <class Fn>
Tensor bitwise(KernelNames names, const Tensor& a, const Scalar& b) {
  auto p = prepare(a, b);
  return run_op(Bitwise<Fn>{names}, {p.a, p.b}, p.out);
}

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) { return compare<EqFn>("eq", a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return compare<EqFn>("eq", a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare<NeFn>("ne", a, b); }
Tensor ne(const Tensor& a, const Scalar& b) { return compare<NeFn>("ne", a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare<LtFn>("lt", a, b); }
Tensor lt(const Tensor& a, const Scalar& b) { return compare<LtFn>("lt", a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare<LeFn>("le", a, b); }
Tensor le(const Tensor& a, const Scalar& b) { return compare<LeFn>("le", a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare<GtFn>("gt", a, b); }
Tensor gt(const Tensor& a, const Scalar& b) { return compare<GtFn>("gt", a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare<GeFn>("ge", a, b); }
Tensor ge(const Tensor& a, const Scalar& b) { return compare<GeFn>("ge", a, b); }

bool equal(const Tensor& a, const Tensor& b) {
  detail::check_same_device({a, b}, "equal");
  if (!a.sizes().equals(b.sizes())) return false;
  return eq(a, b).all().item<bool>();
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(a.dtype() == b.dtype(), scalar_type_name(a.dtype()), " did not match ",
              scalar_type_name(b.dtype()));
  EMBER_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  NoGradGuard no_grad;
  return run_op(IsClose{rtol, atol, equal_nan}, {a, b},
                OutSpec{broadcast_shapes(a.sizes(), b.sizes()), kBool});
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, rtol, atol, equal_nan).all().item<bool>();
}

Tensor logical_and(const Tensor& a, const Tensor& b) { return logical<LogicalAndFn>("logical_and", a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return logical<LogicalOrFn>("logical_or", a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return logical<LogicalXorFn>("logical_xor", a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return bitwise<BitwiseAndFn>(kBitwiseAnd, a, b); }
Tensor bitwise_and(const Tensor& a, const Scalar& b) { return bitwise<BitwiseAndFn>(kBitwiseAnd, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return bitwise<BitwiseOrFn>(kBitwiseOr, a, b); }
Tensor bitwise_or(const Tensor& a, const Scalar& b) { return bitwise<BitwiseOrFn>(kBitwiseOr, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return bitwise<BitwiseXorFn>(kBitwiseXor, a, b); }
Tensor bitwise_xor(const Tensor& a, const Scalar& b) { return bitwise<BitwiseXorFn>(kBitwiseXor, a, b); }

// ---- Tensor methods and operators ---------------------------------------------------------
Tensor Tensor::eq(const Tensor& o) const { return ember::eq(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return ember::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return ember::ne(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return ember::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return ember::lt(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return ember::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return ember::le(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return ember::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return ember::gt(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return ember::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return ember::ge(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return ember::ge(*this, o); }
Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ember::logical_xor(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_and(const Scalar& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_or(const Scalar& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return ember::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_xor(const Scalar& o) const { return ember::bitwise_xor(*this, o); }

Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }

}  // namespace ember
