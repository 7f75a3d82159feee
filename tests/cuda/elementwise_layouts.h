// check_layouts: CPU-vs-CUDA parity of an elementwise op over every operand layout the CUDA
// launch machinery (cuda/loops.cuh) treats differently: dense (vector loads), misaligned and
// strided 1-d runs, broadcasting, transposed and permuted n-d views, 0-dim operands, empty
// tensors, and a size above 1 << 20 (many blocks, a tail after the vectors). Shared by the
// tests of binary, comparison and ternary ops.
#pragma once

#include <functional>

#include "cuda/parity.h"

namespace ember::test {

using ElementwiseOp = std::function<Tensor(const TensorList&)>;
/// make(shape, k): input k of the op (its dtype and value range are the caller's choice).
using MakeInput = std::function<Tensor(IntArrayRef, int)>;

namespace layouts_detail {

/// Parity of op applied to view(x_k) of inputs of the given shapes.
inline void check_views(const ElementwiseOp& op, const MakeInput& make, const std::vector<DimVector>& shapes,
                        const std::function<Tensor(const Tensor&, int)>& view, std::optional<Tol> tol,
                        const char* what) {
  INFO("layout: " << what);
  TensorList in;
  for (size_t k = 0; k < shapes.size(); ++k) in.push_back(make(shapes[k], static_cast<int>(k)));
  check_parity(
      [&](const TensorList& x) {
        TensorList v;
        for (size_t k = 0; k < x.size(); ++k) v.push_back(view(x[k], static_cast<int>(k)));
        return op(v);
      },
      in, tol);
}

inline std::vector<DimVector> same(int n, DimVector s) { return std::vector<DimVector>(n, s); }

}  // namespace layouts_detail

/// Runs op over each layout with n inputs made by make; `big` adds the (1 << 20) + 3 case
/// (callers keep it to a few dtypes: the CPU reference takes a while).
inline void check_layouts(const ElementwiseOp& op, const MakeInput& make, int n, bool big = true,
                          std::optional<Tol> tol = {}) {
  using namespace layouts_detail;
  auto as_is = [](const Tensor& t, int) { return t; };
  check_views(op, make, same(n, {3, 33}), as_is, tol, "dense");
  check_views(
      op, make, same(n, {37}), [](const Tensor& t, int) { return t.slice(0, 1); }, tol,
      "1-d, misaligned for vector loads");
  check_views(
      op, make, same(n, {4, 10}), [](const Tensor& t, int) { return t.slice(1, 0, 10, 2); }, tol,
      "slices with a step");
  check_views(
      op, make, same(n, {9, 5}), [](const Tensor& t, int) { return t.t(); }, tol, "all transposed");
  check_views(
      op, make, same(n, {5, 9}), [](const Tensor& t, int k) { return k == 0 ? t : t.t().contiguous().t(); },
      tol, "one contiguous, the others column-major");
  check_views(
      op, make, same(n, {2, 3, 4}),
      [](const Tensor& t, int) {
        return t.permute({2, 0, 1});
      },
      tol, "permuted 3-d");
  std::vector<DimVector> bcast{{4, 1, 5}, {3, 1}, {5}};
  bcast.resize(static_cast<size_t>(n));
  check_views(op, make, bcast, as_is, tol, "broadcasting");
  std::vector<DimVector> last_scalar = same(n, {3, 5});
  last_scalar.back() = {};
  check_views(op, make, last_scalar, as_is, tol, "the last operand 0-dim");
  check_views(op, make, same(n, {}), as_is, tol, "all 0-dim");
  check_views(op, make, same(n, {0, 3}), as_is, tol, "empty");
  if (big) check_views(op, make, same(n, {(1 << 20) + 3}), as_is, tol, "(1 << 20) + 3 elements");
}

/// The CUDA run raises exactly `message` (for kernels whose text names the device, as
/// PyTorch's "<op>_cuda" not implemented for '<dtype>').
template <class F>
void check_cuda_error(F f, const TensorList& inputs, const std::string& message) {
  std::string got;
  try {
    TensorList in = to_cuda(inputs);
    (void)f(in);
  } catch (const Error& e) {
    got = e.what();
  }
  CHECK(got == message);
}

}  // namespace ember::test
