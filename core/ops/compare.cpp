// Comparisons (eq, ne, lt, le, gt, ge, equal, isclose, allclose), logical and bitwise ops.
// Comparisons compute in the promoted dtype of their operands and produce bool, which carries
// no gradient, so they run under NoGradGuard and record no autograd node.
#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/binary_internal.h"
#include "ember/core/ops/reduce.h"
#include "ember/cuda/binary.h"

namespace ember {

using namespace binary_detail;

namespace {

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

// eq/ne/lt/le/gt/ge: a op b in opmath, a bool result (no gradient).
struct Compare final : Op {
  Cmp cmp;
  explicit Compare(Cmp c) : cmp(c) {}
  const char* name() const override {
    static constexpr const char* kNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    return kNames[static_cast<int>(cmp)];
  }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override {
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      using M = opmath_t<T>;
      auto run = [&](auto f) {
        cpu::binary_kernel<bool, T, T>(in[0], in[1], out[0], [f](T a, T b) { return f(M(a), M(b)); });
      };
      switch (cmp) {
        case Cmp::kEq:
          return run([](M a, M b) { return a == b; });
        case Cmp::kNe:
          return run([](M a, M b) { return a != b; });
        case Cmp::kLt:
          return run([](M a, M b) { return a < b; });
        case Cmp::kLe:
          return run([](M a, M b) { return a <= b; });
        case Cmp::kGt:
          return run([](M a, M b) { return a > b; });
        case Cmp::kGe:
          return run([](M a, M b) { return a >= b; });
      }
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    static constexpr cuda::CompareFn kFns[] = {cuda::CompareFn::kEq, cuda::CompareFn::kNe,
                                               cuda::CompareFn::kLt, cuda::CompareFn::kLe,
                                               cuda::CompareFn::kGt, cuda::CompareFn::kGe};
    cuda::compare(kFns[static_cast<int>(cmp)], in[0], in[1], out[0]);
  }
};

Tensor compare(Cmp c, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  ScalarType t = result_type(a, b);
  return run_op(Compare{c}, {a.to(t), b.to(t)}, OutSpec{broadcast_shapes(a.sizes(), b.sizes()), kBool});
}

Tensor compare(Cmp c, const Tensor& a, const Scalar& b) {
  // The scalar is converted to the promoted dtype first (uint8 < -1 compares with 255, as in PyTorch).
  return compare(c, a, wrap_scalar(b, result_type(a, b), a.device()));
}

// isclose: |a - b| <= atol + rtol |b|, or a == b (so equal infinities are close), or both NaN
// with equal_nan. No gradient.
struct IsClose final : Op {
  double rtol, atol;
  bool equal_nan;
  IsClose(double r, double a, bool n) : rtol(r), atol(a), equal_nan(n) {}
  const char* name() const override { return "isclose"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override {
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      if constexpr (is_float_v<T>)
        float_close<T>(in, out[0]);
      else
        integer_close<T>(in, out[0]);
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::isclose(in[0], in[1], out[0], rtol, atol, equal_nan);
  }

  // PyTorch forms atol + |rtol * b| and |a - b| as tensors of dtype T; rounding through T
  // at the same steps gives the same answers for float16/bfloat16.
  template <class T>
  void float_close(const TensorList& in, Tensor& out) const {
    using M = opmath_t<T>;
    M rt = static_cast<M>(rtol), at = static_cast<M>(atol);
    bool exact_only = rtol == 0 && atol == 0, nan_eq = equal_nan;
    cpu::binary_kernel<bool, T, T>(in[0], in[1], out, [=](T x, T y) {
      M a = static_cast<M>(x), b = static_cast<M>(y);
      if (a == b) return true;
      if (nan_eq && std::isnan(a) && std::isnan(b)) return true;
      if (exact_only) return false;
      M allowed = static_cast<M>(static_cast<T>(at + static_cast<M>(static_cast<T>(std::abs(rt * b)))));
      M actual = static_cast<M>(static_cast<T>(std::abs(a - b)));
      return std::isfinite(actual) && actual <= allowed;
    });
  }

  // Integers (and bool, as 0/1): PyTorch's tolerance is a float tensor; |a - b| is computed
  // in T (wrapping like PyTorch's integer subtraction) and compared as float.
  template <class T>
  void integer_close(const TensorList& in, Tensor& out) const {
    float rt = static_cast<float>(rtol), at = static_cast<float>(atol);
    bool exact_only = rtol == 0 && atol == 0;
    cpu::binary_kernel<bool, T, T>(in[0], in[1], out, [=](T x, T y) {
      if (x == y) return true;
      if (exact_only) return false;
      float allowed = at + std::abs(rt * static_cast<float>(y));
      float actual;
      if constexpr (std::is_same_v<T, bool>) {
        actual = 1.0f;  // x != y
      } else {
        T d = static_cast<T>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));  // wraps, no UB
        if constexpr (std::is_signed_v<T>)
          if (d < 0) d = wrap_neg(d);
        actual = static_cast<float>(d);
      }
      return actual <= allowed;
    });
  }
};

enum class Logic { kAnd, kOr, kXor };

// logical_and/or/xor: operands are first cast to bool (nonzero is true, NaN included).
struct Logical final : Op {
  Logic kind;
  explicit Logical(Logic k) : kind(k) {}
  const char* name() const override {
    static constexpr const char* kNames[] = {"logical_and", "logical_or", "logical_xor"};
    return kNames[static_cast<int>(kind)];
  }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override {
    switch (kind) {
      case Logic::kAnd:
        return cpu::binary_kernel<bool, bool, bool>(in[0], in[1], out[0],
                                                    [](bool a, bool b) { return a && b; });
      case Logic::kOr:
        return cpu::binary_kernel<bool, bool, bool>(in[0], in[1], out[0],
                                                    [](bool a, bool b) { return a || b; });
      case Logic::kXor:
        return cpu::binary_kernel<bool, bool, bool>(in[0], in[1], out[0],
                                                    [](bool a, bool b) { return a != b; });
    }
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    static constexpr cuda::CompareFn kFns[] = {cuda::CompareFn::kLogicalAnd, cuda::CompareFn::kLogicalOr,
                                               cuda::CompareFn::kLogicalXor};
    cuda::compare(kFns[static_cast<int>(kind)], in[0], in[1], out[0]);
  }
};

Tensor logical(Logic k, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  return run_op(Logical{k}, {a.to(kBool), b.to(kBool)},
                OutSpec{broadcast_shapes(a.sizes(), b.sizes()), kBool});
}

// bitwise_and/or/xor: integer and bool dtypes only, in the promoted dtype.
struct Bitwise final : Op {
  Logic kind;
  explicit Bitwise(Logic k) : kind(k) {}
  const char* name() const override {
    static constexpr const char* kNames[] = {"bitwise_and", "bitwise_or", "bitwise_xor"};
    return kNames[static_cast<int>(kind)];
  }
  Save saves() const override { return Save::kNothing; }
  bool elementwise() const override { return true; }
  void cpu(const TensorList& in, TensorList& out) const override {
    visit_dtype(out[0].dtype(), [&]<typename T>() {
      if constexpr (is_float_v<T>) {
        static constexpr const char* kKernels[] = {"bitwise_and_cpu", "bitwise_or_cpu", "bitwise_xor_cpu"};
        not_implemented(kKernels[static_cast<int>(kind)], out[0].dtype());
      } else {
        auto run = [&](auto f) { cpu::binary_kernel<T, T, T>(in[0], in[1], out[0], f); };
        switch (kind) {
          case Logic::kAnd:
            return run([](T a, T b) { return static_cast<T>(a & b); });
          case Logic::kOr:
            return run([](T a, T b) { return static_cast<T>(a | b); });
          case Logic::kXor:
            return run([](T a, T b) { return static_cast<T>(a ^ b); });
        }
      }
    });
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    static constexpr cuda::BinaryFn kFns[] = {cuda::BinaryFn::kBitwiseAnd, cuda::BinaryFn::kBitwiseOr,
                                              cuda::BinaryFn::kBitwiseXor};
    cuda::binary(kFns[static_cast<int>(kind)], in[0], in[1], out[0]);
  }
};

Tensor bitwise(Logic k, const Tensor& a, const Tensor& b) {
  auto p = prepare(a, b);
  return run_op(Bitwise{k}, {p.a, p.b}, p.out);
}

Tensor bitwise(Logic k, const Tensor& a, const Scalar& b) {
  auto p = prepare(a, b);
  return run_op(Bitwise{k}, {p.a, p.b}, p.out);
}

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) { return compare(Cmp::kEq, a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return compare(Cmp::kEq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(Cmp::kNe, a, b); }
Tensor ne(const Tensor& a, const Scalar& b) { return compare(Cmp::kNe, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(Cmp::kLt, a, b); }
Tensor lt(const Tensor& a, const Scalar& b) { return compare(Cmp::kLt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(Cmp::kLe, a, b); }
Tensor le(const Tensor& a, const Scalar& b) { return compare(Cmp::kLe, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(Cmp::kGt, a, b); }
Tensor gt(const Tensor& a, const Scalar& b) { return compare(Cmp::kGt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(Cmp::kGe, a, b); }
Tensor ge(const Tensor& a, const Scalar& b) { return compare(Cmp::kGe, a, b); }

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

Tensor logical_and(const Tensor& a, const Tensor& b) { return logical(Logic::kAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return logical(Logic::kOr, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return logical(Logic::kXor, a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return bitwise(Logic::kAnd, a, b); }
Tensor bitwise_and(const Tensor& a, const Scalar& b) { return bitwise(Logic::kAnd, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return bitwise(Logic::kOr, a, b); }
Tensor bitwise_or(const Tensor& a, const Scalar& b) { return bitwise(Logic::kOr, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return bitwise(Logic::kXor, a, b); }
Tensor bitwise_xor(const Tensor& a, const Scalar& b) { return bitwise(Logic::kXor, a, b); }

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
