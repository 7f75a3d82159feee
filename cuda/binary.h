// CUDA kernels of the broadcasting elementwise ops of two and three operands: arithmetic,
// comparisons, logical and bitwise ops, where, lerp, addcmul/addcdiv, masked_fill. Called by
// core/ops/binary.cpp, compare.cpp and ternary.cpp; plain C++ declarations. The formulas are
// the functors the CPU loops run (core/ops/binary_math.h, compare_math.h, ternary_math.h);
// the map templates are defined in cuda/binary.cuh and compiled for the functors of the lists
// below, each list in the .cu file named beside it (and in cuda/no_cuda.cpp without CUDA), so
// a functor missing from them fails to link in every build.
//
// The core op has already promoted and cast its operands and checked the dtype against the
// functor's domain (raising PyTorch's "<op>_cuda" message): unless noted, every tensor passed
// here has out's dtype, and the inputs broadcast to out's shape. All run on the current
// stream of out's device and never synchronize with the host. In particular an integer
// division by zero (DivTruncFn, DivFloorFn, RemainderFn, FmodFn) stores 0 and raises nothing,
// where the CPU raises "ZeroDivisionError" (binary_math.h says why).
#pragma once

#include "ember/core/ops/binary_math.h"
#include "ember/core/ops/compare_math.h"
#include "ember/core/ops/ternary_math.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out = fn(a, b) elementwise, computed in opmath_t (float for float16/bfloat16).
template <class Fn>
void binary_map(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn);

// cuda/binary.cu
#define EMBER_CUDA_BINARY_ARITH_MAPS(X)                                                         \
  X(AddFn) X(SubFn) X(MulFn) X(DivFn) X(MaximumFn) X(MinimumFn) X(BitwiseAndFn) X(BitwiseOrFn) \
  X(BitwiseXorFn) X(LerpScalarFn)
// cuda/division.cu
#define EMBER_CUDA_BINARY_DIVISION_MAPS(X) X(DivTruncFn) X(DivFloorFn) X(RemainderFn) X(FmodFn)
// cuda/pow.cu
#define EMBER_CUDA_BINARY_POW_MAPS(X) X(PowFn) X(Atan2Fn)

// One-input maps of a tensor and a scalar (pow with a scalar exponent, mul/div of a
// float16/bfloat16 tensor by a number) run through cuda::unary_map (cuda/unary.h), whose
// template pow.cu also compiles for these functors; the exact forms of pow that are unary ops
// of their own (SqrtFn, SquareFn, RsqrtFn, ReciprocalFn: visit_pow_scalar) come from the
// unary lists.
#define EMBER_CUDA_SCALAR_OPERAND_MAPS(X) \
  X(PowScalarFn) X(CubeFn) X(InvSquareFn) X(MulScalarFn) X(DivScalarFn)

/// out (bool) = fn(a, b); a and b share one dtype (bool for the logical ops).
template <class Fn>
void compare_map(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn);

// cuda/compare.cu
#define EMBER_CUDA_COMPARE_MAPS(X) \
  X(EqFn) X(NeFn) X(LtFn) X(LeFn) X(GtFn) X(GeFn) X(LogicalAndFn) X(LogicalOrFn) X(LogicalXorFn)

/// out (bool) = isclose(a, b): a and b share one dtype.
void isclose(const Tensor& a, const Tensor& b, const Tensor& out, double rtol, double atol, bool equal_nan);

/// out = fn(a, b, c) elementwise, computed in opmath_t.
template <class Fn>
void ternary_map(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out, const Fn& fn);

// cuda/ternary.cu
#define EMBER_CUDA_TERNARY_MAPS(X) X(LerpFn) X(AddcmulFn) X(AddcdivFn)

/// out = cond ? a : b (WhereFn); cond bool, a and b of out's dtype.
void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
/// out = mask ? value : self (MaskedFillFn); mask bool, value a 0-dim operand of out's dtype
/// that stays on the device (the kernel reads it as a broadcast operand: no host sync).
void masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out);

}  // namespace ember::cuda
