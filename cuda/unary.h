// One-input elementwise maps, activations and clamp on CUDA tensors (the CUDA side of
// core/ops/unary.cpp and core/ops/activation.cpp), and the masks their gradients are built
// from. Plain C++ declarations; the formulas are the functors the CPU runs (core/ops/
// unary_math.h, activation_math.h), the kernels in cuda/unary_math.cu, cuda/unary_numeric.cu
// and cuda/activation.cu (cuda/no_cuda.cpp in a build without CUDA).
#pragma once

#include <cstdint>

#include "ember/core/ops/activation_math.h"
#include "ember/core/ops/unary_math.h"
#include "ember/core/ops/value_test.h"
#include "ember/core/scalar.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// out = fn(x) elementwise, with fn one of the functors of core/ops/unary_math.h or
/// core/ops/activation_math.h: the very formula the CPU loop runs, computed in opmath_t (float
/// for float16 and bfloat16). out has x's shape and dtype (possibly strided, or x itself); the
/// op has checked the dtype against Fn's domain and raised PyTorch's error already.
/// Defined in cuda/unary.cuh and compiled for the functors of the lists below, each list in
/// the kernel file named beside it (and in cuda/no_cuda.cpp without CUDA): a functor missing
/// from them fails to link in every build.
template <class Fn>
void unary_map(const Tensor& x, const Tensor& out, const Fn& fn);

// cuda/unary_math.cu
#define EMBER_CUDA_UNARY_MATH_MAPS(X)                                                            \
  X(ExpFn) X(Exp2Fn) X(Expm1Fn) X(LogFn) X(Log2Fn) X(Log10Fn) X(Log1pFn) X(SqrtFn) X(RsqrtFn)      \
  X(ReciprocalFn) X(SinFn) X(CosFn) X(TanFn) X(AsinFn) X(AcosFn) X(AtanFn) X(SinhFn) X(CoshFn)     \
  X(TanhFn) X(AsinhFn) X(AcoshFn) X(AtanhFn) X(SigmoidFn) X(ErfFn) X(ErfcFn)
// cuda/unary_numeric.cu
#define EMBER_CUDA_UNARY_NUMERIC_MAPS(X)                                                          \
  X(NegFn) X(AbsFn) X(SquareFn) X(SignFn) X(FloorFn) X(CeilFn) X(RoundFn) X(TruncFn)              \
  X(RoundDecimalsFn) X(FracFn) X(NanToNumFn)
// cuda/activation.cu
#define EMBER_CUDA_ACTIVATION_MAPS(X)                                                             \
  X(ReluFn) X(LeakyReluFn) X(EluFn) X(HardtanhFn) X(GeluFn) X(GeluTanhFn) X(SiluFn) X(MishFn)     \
  X(SoftplusFn) X(ThresholdFn) X(HardshrinkFn) X(SoftshrinkFn) X(LogSigmoidFn)

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
