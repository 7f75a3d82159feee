// CUDA kernels of the broadcasting elementwise ops of two and three operands: arithmetic,
// comparisons, logical and bitwise ops, where, lerp, addcmul/addcdiv, masked_fill. Called by
// core/ops/binary.cpp, compare.cpp and ternary.cpp; plain C++ declarations, defined in
// cuda/binary.cu, division.cu, pow.cu, compare.cu and ternary.cu (no_cuda.cpp without CUDA).
//
// The core op has already promoted and cast its operands: unless noted, every tensor passed
// here has out's dtype, and the inputs broadcast to out's shape. All run on the current
// stream of out's device and never synchronize with the host.
#pragma once

#include "ember/core/scalar.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out = f(a, b).
enum class BinaryFn {
  kAdd,  // a + alpha * b
  kSub,  // a - alpha * b
  kMul,
  kDiv,        // true division (floating dtypes)
  kDivTrunc,   // division rounded toward zero
  kDivFloor,   // division rounded down
  kRemainder,  // Python's %: the result takes the divisor's sign
  kFmod,       // C's fmod: the result takes the dividend's sign
  kPow,
  kAtan2,
  kMaximum,  // NaN propagates
  kMinimum,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kLerp,  // lerp(a, b, alpha): a scalar weight
  // a * alpha and a / alpha with the scalar kept in opmath (float for float16/bfloat16, as
  // PyTorch's mul/div by a Python number): b is not read (pass a again).
  kMulScalar,
  kDivScalar,
};

/// Integer division by zero (kDivTrunc, kDivFloor, kRemainder, kFmod): the CPU raises
/// "ZeroDivisionError"; on CUDA the element is 0 and nothing is raised, because finding out
/// would need a host synchronization in every integer division. (PyTorch's CUDA kernels do
/// not check either; their result is whatever the hardware division gives.)
void binary(BinaryFn fn, const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha = 1);

/// out = x^exponent for a scalar exponent, with the CPU's exact special cases (2, 0.5, -1...).
void pow_scalar(const Tensor& x, const Tensor& out, const Scalar& exponent);

/// out (bool) = a op b; a and b share one dtype (bool for the logical ops).
enum class CompareFn { kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr, kLogicalXor };
void compare(CompareFn fn, const Tensor& a, const Tensor& b, const Tensor& out);

/// out (bool) = isclose(a, b): a and b share one dtype.
void isclose(const Tensor& a, const Tensor& b, const Tensor& out, double rtol, double atol, bool equal_nan);

/// out = f(a, b, c).
enum class TernaryFn {
  kWhere,       // a ? b : c, a is the bool condition
  kLerp,        // a + c * (b - a), a tensor weight
  kAddcmul,     // a + value * b * c
  kAddcdiv,     // a + value * b / c
  kMaskedFill,  // b ? c : a, b is the bool mask and c the 0-dim fill value
};
void ternary(TernaryFn fn, const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out,
             const Scalar& value = 1);

}  // namespace ember::cuda
