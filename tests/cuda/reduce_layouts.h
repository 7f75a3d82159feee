// Input layouts for the CUDA parity tests of reductions, scans and sorting
// (test_reduce.cpp, test_scan_sort.cpp): every case the launch plans of cuda/reduce_plan.h
// treat differently — dense rows, transposed and permuted views (strided reduced dims, dense
// kept dims), slices with a step, expanded (stride 0) inputs, size-1 and empty dims, 0-dim
// tensors, and sizes above 1 << 20 (split reductions, split scans, device-wide sorts) — plus
// inputs holding NaN, infinities, -0.0 and ties.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "cuda/parity.h"

namespace ember::test {

/// An op of one input: a reduction with its dims fixed, a scan, a sort.
using OneInputOp = std::function<Tensor(const Tensor&)>;

/// Input values with the awkward ones mixed in (floating types): NaN, +-inf, -0.0, and runs
/// of equal values; integers come from a small range, so they tie often.
inline Tensor special_input(IntArrayRef shape, ScalarType dtype, uint64_t seed = 0) {
  if (!is_floating_point(dtype)) return make_input(shape, dtype, -2, 3, seed);
  Tensor x = make_input(shape, kDouble, -3, 3, seed).round().div(2).contiguous();  // halves: many ties
  double* p = x.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (i % 11 == 3) p[i] = std::numeric_limits<double>::quiet_NaN();
    if (i % 13 == 5) p[i] = std::numeric_limits<double>::infinity();
    if (i % 17 == 7) p[i] = -std::numeric_limits<double>::infinity();
    if (i % 7 == 2) p[i] = -0.0;
  }
  return x.to(dtype);
}

struct LayoutOptions {
  double lo = -3, hi = 3;       // value range of the inputs
  bool empty = true;            // also tensors with no elements (ops that accept them)
  bool big = false;             // also (1 << 20) + 3 elements, 1-d and 2-d
  std::optional<Tol> tol = {};  // tolerance (default: parity.h's per dtype)
};

/// Parity of op over the layouts of inputs of dtype t; op must accept tensors of 1 to 3
/// dims (dims 0 and -1 exist in each).
inline void check_reduce_layouts(const OneInputOp& op, ScalarType t, const LayoutOptions& o = {}) {
  auto run = [&](const char* what, IntArrayRef shape, const std::function<Tensor(const Tensor&)>& view) {
    INFO("layout: " << std::string(what) << ", dtype " << scalar_type_name(t));
    check_parity([&](const TensorList& x) { return op(view(x[0])); }, {make_input(shape, t, o.lo, o.hi)},
                 o.tol);
  };
  auto as_is = [](const Tensor& x) { return x; };
  run("dense 2-d", {5, 37}, as_is);
  run("1-d", {29}, as_is);
  run("transposed", {37, 6}, [](const Tensor& x) { return x.t(); });
  run("slices with a step", {6, 20}, [](const Tensor& x) { return x.slice(1, 1, 20, 3); });
  run("expanded (stride 0)", {1, 33}, [](const Tensor& x) { return x.expand({4, 33}); });
  run("permuted 3-d", {3, 4, 5}, [](const Tensor& x) { return x.permute({2, 0, 1}); });
  run("size-1 dims", {1, 9, 1}, as_is);
  run("many short rows", {3000, 3}, as_is);
  run("few long rows", {3, 3000}, as_is);
  if (o.empty) {
    run("empty, kept dim 0", {0, 4}, as_is);
    run("empty, reduced dim 0", {4, 0}, as_is);
  }
  if (o.big) {
    run("(1 << 20) + 3 elements, 1-d", {(1 << 20) + 3}, as_is);
    run("(1 << 18) + 1 rows of 5", {(1 << 18) + 1, 5}, as_is);
  }
}

}  // namespace ember::test
