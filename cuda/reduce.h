// The CUDA kernels of reductions, scans and sorting, called by core/ops/reduce.cpp,
// minmax.cpp, norm.cpp, scan.cpp and sort.cpp. Plain C++ declarations: defined in
// cuda/reduce.cu (+ reduce_stats.cu, minmax.cu), cuda/scan.cu and cuda/sort.cu, or in
// cuda/no_cuda.cpp in a build without CUDA. Results are deterministic: every fold runs in
// an order fixed by the shapes (no atomics), with NaN and ties handled as on the CPU.
#pragma once

#include <cstdint>

namespace ember {
class Tensor;
}

namespace ember::cuda {

enum class ReduceFn { kSum, kProd, kMean, kAll, kAny, kMax, kMin, kVar, kStd, kLogSumExp, kNorm };

/// out = fn of x over the dims set in `mask` (bit d: dim d), one element per kept index, where
/// out is dense and has x's dtype (all/any: bool, or uint8 for uint8 input). `p` is var/std's
/// correction and norm's order. Floating values accumulate in double and integers in int64
/// (core's acc_t), as on the CPU.
void reduce(ReduceFn fn, const Tensor& x, const Tensor& out, uint64_t mask, double p = 0);

/// indices = the row-major position among the reduced elements of the max (min) of x over
/// `mask`, the first of equal extremes, NaN above everything; *values = that value when
/// values is given. Outputs dense.
void arg_reduce(bool is_max, const Tensor& x, const Tensor* values, const Tensor& indices, uint64_t mask);

enum class ScanFn { kCumsum, kCumprod };

/// out = the inclusive scan of x along `dim` (from the last element when `reverse`), x and
/// out of one dtype, out dense; accumulates in acc_t like the CPU.
void scan(ScanFn fn, const Tensor& x, const Tensor& out, int64_t dim, bool reverse);

/// The first values.size(dim) elements of each line of x along `dim`, stably sorted
/// (descending: largest first; NaN above every number either way), and their positions:
/// sort, argsort and topk.
void sort(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t dim, bool descending);

}  // namespace ember::cuda
