// Scans along one dim: cumsum and cumprod. Integer and bool inputs scan in int64 unless a
// dtype is given, as in PyTorch; floating ones accumulate in double on the CPU.
#include <algorithm>
#include <array>

#include "ember/core/autocast.h"
#include "ember/core/cpu/reduce.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/compare.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/scan.h"
#include "ember/core/ops/shape.h"
#include "ember/cuda/reduce.h"

namespace ember {
namespace {

/// out[k] = op(out[k-1], x[k]) along `dim` (from the last element when `reverse`), in acc_t.
/// x and out are viewed as dense [outer, n, inner]. When dim is the innermost dim each line
/// is one dense run; otherwise a block of neighbouring lines is scanned together, one row
/// at a time, so memory is read in order instead of `inner` elements apart.
template <class F>
void scan_kernel(const Tensor& x_in, Tensor& out, int64_t dim, bool reverse, int init, const F& op) {
  if (out.numel() == 0) return;
  Tensor x = x_in.is_contiguous() ? x_in : x_in.detach().contiguous();  // out is dense already
  int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  int64_t outer = x.numel() / (n * inner);
  visit_dtype(out.dtype(), [&]<typename T>() {
    using A = acc_t<T>;
    auto load = [](T v) { return static_cast<A>(static_cast<opmath_t<T>>(v)); };
    auto store = [](A acc) {
      if constexpr (std::is_same_v<T, bool>)
        return acc != 0;
      else
        return static_cast<T>(static_cast<opmath_t<T>>(acc));
    };
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    int64_t first = reverse ? n - 1 : 0, step = reverse ? -1 : 1;
    constexpr int64_t block = cpu::outer_block(sizeof(A));  // lines scanned together
    int64_t blocks = (inner + block - 1) / block;
    int64_t grain = std::max<int64_t>(1, kGrainSize / (std::min(inner, block) * n));
    parallel_for(outer * blocks, grain, [&](int64_t b, int64_t e) {
      std::vector<A> acc(std::min(inner, block));
      for (int64_t t = b; t < e; ++t) {
        int64_t i0 = t % blocks * block, nb = std::min(block, inner - i0);
        const T* src = in + t / blocks * n * inner + i0 + first * inner;
        T* dst = o + t / blocks * n * inner + i0 + first * inner;
        if (nb == 1) {  // one line: keep its accumulator in a register
          A a(init);
          for (int64_t k = 0; k < n; ++k, src += step * inner, dst += step * inner) {
            a = op(a, load(*src));
            *dst = store(a);
          }
          continue;
        }
        std::fill(acc.begin(), acc.begin() + nb, A(init));
        for (int64_t k = 0; k < n; ++k, src += step * inner, dst += step * inner) {
          for (int64_t i = 0; i < nb; ++i) {
            acc[i] = op(acc[i], load(src[i]));
            dst[i] = store(acc[i]);
          }
        }
      }
    });
  });
}

Tensor cumsum_impl(const Tensor& x, int64_t dim, bool reverse);

// cumsum: y_j = sum_{k<=j} x_k, so dL/dx_k = sum_{j>=k} g_j: a cumsum of the gradient taken
// from the other end (reverse = true scans from the last element; backward flips it back).
struct Cumsum final : UnaryOp {
  // CUDA autocast: float32 unless a dtype is asked for (fp32_set_opt_dtype).
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  int64_t dim;
  bool reverse;
  Cumsum(int64_t d, bool r) : dim(d), reverse(r) {}
  const char* name() const override { return "cumsum"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    scan_kernel(x, out, dim, reverse, 0, [](auto a, auto b) { return a + b; });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::scan(cuda::ScanFn::kCumsum, x, out, dim, reverse);
  }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override {
    return cumsum_impl(grad, dim, !reverse);
  }
};

Tensor cumsum_impl(const Tensor& x, int64_t dim, bool reverse) {
  return run_op(Cumsum{dim, reverse}, {x}, OutSpec{DimVector(x.sizes()), x.dtype()});
}

/// cumprod's gradient when x holds zeros, where dividing by x_k is impossible:
/// dL/dx_k = sum_{j>=k} g_j prod_{i<k} x_i prod_{k<i<=j} x_i, one k at a time (O(n^2), as
/// PyTorch does; built from ops, so it is differentiable again).
Tensor cumprod_backward_zeros(const Tensor& grad, const Tensor& x, int64_t dim) {
  int64_t n = x.size(dim);
  DimVector ones_size(x.sizes());
  ones_size[dim] = 1;
  Tensor one = ones(ones_size, x.options());
  TensorList slices;
  for (int64_t k = 0; k < n; ++k) {
    Tensor before = k == 0 ? one : x.narrow(dim, 0, k).prod(dim, true);
    Tensor others =
        k == n - 1 ? before : cat({before, before * x.narrow(dim, k + 1, n - k - 1).cumprod(dim)}, dim);
    slices.push_back((grad.narrow(dim, k, n - k) * others).sum(IntArrayRef(dim), true));
  }
  return cat(slices, dim);
}

// cumprod: y_j = prod_{k<=j} x_k, dy_j/dx_k = y_j / x_k for j >= k, so without zeros
// dL/dx_k = (sum_{j>=k} g_j y_j) / x_k; with zeros see cumprod_backward_zeros.
struct Cumprod final : UnaryOp {
  static constexpr AutocastPolicies kAutocast = autocast::kFloat32CudaOnly;
  int64_t dim;
  explicit Cumprod(int64_t d) : dim(d) {}
  const char* name() const override { return "cumprod"; }
  Save saves() const override { return Save::kBoth; }
  void cpu(const Tensor& x, Tensor& out) const override {
    scan_kernel(x, out, dim, false, 1, [](auto a, auto b) { return a * b; });
  }
  void cuda(const Tensor& x, Tensor& out) const override {
    cuda::scan(cuda::ScanFn::kCumprod, x, out, dim, false);
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    Tensor x = s.input(0);
    if (x.numel() <= 1 || x.size(dim) == 1) return grad;
    if (!eq(x, 0).any().item<bool>()) return cumsum_impl(s.output() * grad, dim, true) / x;
    return cumprod_backward_zeros(grad, x, dim);
  }
};

/// Integer and bool inputs scan in int64 unless `dtype` says otherwise.
ScalarType scan_dtype(ScalarType in, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(in, true) ? kLong : in;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Cumsum::kAutocast, &cumsum, x, dim, dtype);
  int64_t d = maybe_wrap_dim(dim, x.dim());
  return cumsum_impl(x.to(scan_dtype(x.dtype(), dtype)), d, false);
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  if (autocast::is_active() && !dtype) [[unlikely]]
    return autocast::call(Cumprod::kAutocast, &cumprod, x, dim, dtype);
  int64_t d = maybe_wrap_dim(dim, x.dim());
  ScalarType t = scan_dtype(x.dtype(), dtype);
  return run_op(Cumprod{d}, {x.to(t)}, OutSpec{DimVector(x.sizes()), t});
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumsum(*this, dim, dtype);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumprod(*this, dim, dtype);
}

}  // namespace ember
