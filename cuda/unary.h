// One-input elementwise maps, activations and clamp on CUDA tensors (the CUDA side of
// core/ops/unary.cpp and core/ops/activation.cpp), and the masks their gradients are built
// from. Plain C++ declarations; the kernels are in cuda/unary_math.cu, cuda/unary_numeric.cu
// and cuda/activation.cu (cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include <cstdint>

#include "ember/core/ops/value_test.h"
#include "ember/core/scalar.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// The maps of cuda::unary. Each computes its op's CPU formula (core/ops) in opmath_t (float
/// for float16 and bfloat16), with out and x of one dtype. The op checks the dtype first (and
/// raises PyTorch's error); the groups below say which dtypes each map has a kernel for, and
/// which UnaryArgs it reads.
enum class UnaryFn : uint8_t {
  // cuda/unary_math.cu; floating dtypes.
  kExp, kExp2, kExpm1, kLog, kLog2, kLog10, kLog1p, kSqrt, kRsqrt, kReciprocal,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kSigmoid, kErf, kErfc,
  // cuda/unary_numeric.cu.
  kNeg, kAbs, kSquare,            // every dtype but bool
  kSign,                          // every dtype
  kFloor, kCeil, kRound, kTrunc,  // every dtype but bool (integers are copied)
  kRoundDecimals,                 // floating; a = 10^|decimals|, b = 1 when decimals < 0
  kFrac,                          // floating
  kNanToNum,                      // floating; a, b, c = what nan, +inf and -inf become
  // cuda/activation.cu.
  kRelu,                          // every dtype but bool
  kHardtanh,                      // every dtype but bool; a, b = min_val, max_val
  kLeakyRelu,                     // floating; a = negative_slope
  kElu,                           // floating; a, b, c = alpha, scale, input_scale
  kGelu, kGeluTanh, kSilu, kMish, // floating
  kSoftplus,                      // floating; a, b = beta, threshold
};

/// The parameters of the parametrised maps, as the CPU kernels hold them (doubles, cast to
/// the compute type in the kernel, as on the CPU).
struct UnaryArgs {
  double a = 0;
  double b = 0;
  double c = 0;
};

/// out = fn(x) elementwise; out has x's shape and dtype (possibly strided, or x itself).
void unary(UnaryFn fn, const Tensor& x, const Tensor& out, UnaryArgs args = {});
/// out = (x == 0), out bool or of x's dtype; x any dtype.
void logical_not(const Tensor& x, const Tensor& out);
/// out = min(max(x, min), max) with nan propagation, any dtype; the bounds are those the CPU
/// kernel uses (absent ones already replaced by the dtype's limits).
void clamp(const Tensor& x, const Scalar& min, const Scalar& max, const Tensor& out);
/// The same with tensor bounds broadcast to out; x, min, max and out of one dtype.
void clamp(const Tensor& x, const Tensor& min, const Tensor& max, const Tensor& out);

/// out (bool) = test(x), x floating.
void value_test(const ValueTest& test, const Tensor& x, const Tensor& out);
/// out = test(x) ? if_true : if_false, in x's floating dtype.
void value_select(const ValueTest& test, double if_true, double if_false, const Tensor& x, const Tensor& out);
/// out = mask ? t : 0 with a bool mask broadcast to t; t floating (exact zeros even where t
/// holds inf or nan).
void masked(const Tensor& t, const Tensor& mask, const Tensor& out);
/// out (bool, broadcast shape) = which mask of clamp's gradient; x, min and max floating, of
/// one dtype.
void clamp_grad_mask(ClampGradMask which, const Tensor& x, const Tensor& min, const Tensor& max,
                     const Tensor& out);

}  // namespace ember::cuda
